#!/usr/bin/env bash
set -u
O=/tmp/o12; mkdir -p "$O"
start=$(date +%s)
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
PASSES=1 PATCH=experiments/decode_splitk_tensor_core_exact.patch SHAPES=anchors \
  BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/cold' \
  timeout 200 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=13 > "$O/exp.log" 2>&1
log "experiments rc=$?"
B=build/exp_SB_DECODE_EXPERIMENT_13
timeout 150 $B/bench/bench_attention --shapes=b1_hq32_hkv8_d128_q1_kv4096,b16_hq32_hkv8_d128_q1_kv8192,b1_hq32_hkv8_d128_q1_kv32768 \
  --benchmark_filter='^attention/decode_splitk_s[0-9]+/bf16/.*/cold' --benchmark_repetitions=3 --benchmark_display_aggregates_only=true \
  --benchmark_out="$O/sweep_13.json" --benchmark_out_format=json > "$O/sweep_13.txt" 2>&1
log "sweep rc=$?"
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 1 $B/tests/test_gpu --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/${tool}_13.log" 2>&1
  log "$tool rc=$?"
done
el=$(( $(date +%s) - start ))
if [ $el -lt 470 ]; then
  timeout $(( 560 - el )) ncu --clock-control none --cache-control all -k 'regex:split_kernel|combine' --set full --csv --page raw \
    $B/bench/bench_attention --profile --shapes=b1_hq32_hkv8_d128_q1_kv4096 \
    --benchmark_filter='decode_splitk(_s16)?/bf16/.*/cold' > "$O/ncu_13_b1.csv" 2>&1
  log "ncu rc=$?"
fi
tar czf "$OUT/o12.tgz" -C /tmp o12
