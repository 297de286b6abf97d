#!/usr/bin/env bash
# Session 20, call 6: decode_splitk_l2_prefetch.patch =40 (prefetch.global.L2 of the clustered kernel's chunk
# on entry) against the default, b1 GQA KV 1024 / 4096 / 16384, cold and hot, with the launch floor rows and
# cuDNN; two passes; no sanitizers (a candidate only: its adoption needs them and a full run).
set -u
O=$OUT/o78; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c78.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_splitk_l2_prefetch.patch TEST_FILTER='*DecodeSplitk*' \
  SHAPES=b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv16384 \
  BENCH_FILTER='^(attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*|floor/.*)/(cold|hot)' \
  timeout 330 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=40 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o78.tgz o78 && rm -rf o78
