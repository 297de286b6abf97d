#!/usr/bin/env bash
# Session 21, call 6: decode_splitk_early_tile0.patch, =58 (the tensor-core kernel's prologue reordered: 32-bit
# block coordinates, tile 0's copies first, then Q's real rows, one commit, the row limits after the
# stages) against the default; b1 GQA KV 1024 / 4096 / 16384 cold and hot with cuDNN and the launch floor,
# b16 KV 8192 and b64 KV 16384 (controls); two passes; memcheck and racecheck of =58.
set -u
O=$OUT/o86; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c86.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_splitk_early_tile0.patch TEST_FILTER='*DecodeSplitk*' \
  SHAPES=b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv16384,b16_hq32_hkv8_d128_q1_kv8192,b64_hq32_hkv8_d128_q1_kv16384 \
  BENCH_FILTER='^(attention/(decode_splitk|decode_splitk_s4|torch_sdpa_cudnn)/.*_q1_.*|floor/.*)/(cold|hot)' \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS='SB_DECODE_EXPERIMENT_58' SANITIZE_TIMEOUT=180 \
  RACECHECK_FILTER='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*' \
  timeout 450 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=58 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o86.tgz o86 && rm -rf o86
