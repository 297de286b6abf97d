#!/usr/bin/env bash
# Session 17, call 3: decode_splitk_mha_tc.patch =47/=48 again (call 2 refused to time them: a launch-floor test
# assumed MHA plans are FMA; it now uses head_dim 256), beside the default at the seven MHA decode shapes.
set -u
O=$OUT/o62; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c62.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_splitk_mha_tc.patch TEST_FILTER='*DecodeSplitk*' SHAPES=b1_hq32_hkv32_d128_q1_kv4096,b1_hq32_hkv32_d128_q1_kv32768,b1_hq32_hkv32_d128_q1_kv131072,b16_hq32_hkv32_d128_q1_kv8192,b64_hq32_hkv32_d128_q1_kv4096,b64_hq32_hkv32_d128_q1_kv16384,b256_hq32_hkv32_d128_q1_kv1024 BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/(cold|hot)' timeout 420 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=47 SB_DECODE_EXPERIMENT=48 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o62.tgz o62 && rm -rf o62
