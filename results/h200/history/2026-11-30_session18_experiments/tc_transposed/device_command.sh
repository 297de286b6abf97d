#!/usr/bin/env bash
# Session 18, call 1: decode_splitk_tc_transposed.patch (=50 transposed tensor-core split kernel, =51 + MHA on it)
# beside the default; memcheck + racecheck of both; Nsight Compute at b16 KV 8192.
set -u
O=$OUT/o65; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c65.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_splitk_tc_transposed.patch TEST_FILTER='*DecodeSplitk*' SHAPES=b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv16384,b16_hq32_hkv8_d128_q1_kv8192,b16_hq32_hkv8_d128_q1_kv32768,b64_hq32_hkv8_d128_q1_kv16384,b256_hq32_hkv8_d128_q1_kv4096,b64_hq32_hkv32_d128_q1_kv4096,b1_hq32_hkv32_d128_q1_kv32768 BENCH_FILTER='^(attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*|floor/.*)/(cold|hot)' NCU_SHAPES=b16_hq32_hkv8_d128_q1_kv8192 SANITIZE=memcheck,racecheck SANITIZE_BUILDS='SB_DECODE_EXPERIMENT_50 SB_DECODE_EXPERIMENT_51' SANITIZE_TIMEOUT=150 RACECHECK_FILTER='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*' timeout 575 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=50 SB_DECODE_EXPERIMENT=51 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o65.tgz o65 && rm -rf o65
