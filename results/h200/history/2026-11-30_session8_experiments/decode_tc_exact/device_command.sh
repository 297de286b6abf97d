#!/usr/bin/env bash
set -u
O=/tmp/o11; mkdir -p "$O"
start=$(date +%s)
PATCH=experiments/decode_splitk_tensor_core_exact.patch SHAPES=anchors \
  BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/cold' \
  timeout 400 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=13 > "$O/exp.txt" 2>&1
echo "rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for n in SB_DECODE_EXPERIMENT_13 default; do
  el=$(( $(date +%s) - start ))
  [ $el -gt 470 ] && break
  timeout $(( 560 - el )) ncu --clock-control none --cache-control all -k 'regex:split_kernel|combine' --set full --csv --page raw \
    build/exp_$n/bench/bench_attention --profile --shapes=b16_hq32_hkv8_d128_q1_kv8192 \
    --benchmark_filter='decode_splitk/bf16/.*/cold' > "$O/ncu_$n.csv" 2>&1
  echo "ncu $n rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
tar czf "$OUT/o11.tgz" -C /tmp o11
