#!/usr/bin/env bash
# Session 19, call 1: decode_splitk_tc_stages.patch (=52 tc d128 6 stages unclustered, =53 4 stages, =54 heuristic
# counting two tc blocks an SM) and the tree's =1 (FMA kernel 6 stages), cold, 11 decode shapes, cuDNN beside the default;
# then Nsight Compute launch stats of cuDNN's kernel at b16 GQA KV 32768.
set -u
O=$OUT/o69; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c69.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
S=b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv32768,b16_hq32_hkv8_d128_q1_kv8192,b16_hq32_hkv8_d128_q1_kv32768,b4_hq32_hkv8_d128_q1_kv131072,b64_hq32_hkv8_d128_q1_kv16384,b256_hq32_hkv8_d128_q1_kv4096,b64_hq32_hkv32_d128_q1_kv4096,b64_hq32_hkv32_d128_q1_kv16384,b1_hq32_hkv32_d128_q1_kv131072,b256_hq32_hkv32_d128_q1_kv1024
PATCH=experiments/decode_splitk_tc_stages.patch TEST_FILTER='*DecodeSplitk*' SHAPES=$S BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/cold' timeout 500 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=1 SB_DECODE_EXPERIMENT=52 SB_DECODE_EXPERIMENT=53 SB_DECODE_EXPERIMENT=54 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
left=$(( 570 - ($(date +%s) - start) ))
if [ $left -gt 30 ] && [ -x build/exp_default/bench/bench_attention ]; then
  timeout $left ncu --clock-control none --cache-control all --section LaunchStats --section SpeedOfLight --section Occupancy -k 'regex:cudnn|sm90|fmha|flash' -s 3 -c 3 --csv --page raw build/exp_default/bench/bench_attention --profile --dtypes=bf16 --shapes=b16_hq32_hkv8_d128_q1_kv32768 --benchmark_filter='^attention/torch_sdpa_cudnn/bf16/decode/.*/cold' > "$O/ncu_cudnn_b16_kv32768.csv" 2>&1
  echo "ncu rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
fi
cd "$OUT" && tar czf o69.tgz o69 && rm -rf o69
