#!/usr/bin/env bash
# Session 20, call 2: rmsnorm_two_rows_in_flight (=32) against the default, two passes, default shapes, bf16
# cold and hot, with memcheck and racecheck of =32 over the RMSNorm tests; then the order diagnostic at MHA
# b64 KV 4096: decode_splitk and cuDNN alone against the full run's order (manual cold + hot first).
set -u
O=$OUT/o74; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c74.sh "$O/device_command.sh"
git rev-parse HEAD > "$O/commit.txt"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_two_rows_in_flight.patch SHAPES=default \
  BENCH_FILTER='^rmsnorm/(vectorized|ref_copy|ref_copy_kernel|torch_rms_norm)/bf16/.*/(cold|hot)' \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS='SB_RMSNORM_EXPERIMENT_32' SANITIZE_TIMEOUT=120 \
  timeout 400 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=32 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cmake --build build/exp_default --target bench_attention > "$O/build_attention.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
S=b64_hq32_hkv32_d128_q1_kv4096
i=0
for f in alone after_manual alone after_manual; do
  i=$((i + 1))
  case $f in
    alone) F='^attention/(decode_splitk|torch_sdpa_cudnn)/bf16/decode/.*/cold' ;;
    after_manual) F='^attention/(manual|decode_splitk|torch_sdpa_cudnn)/bf16/decode/.*/(cold|hot)' ;;
  esac
  left=$(( 585 - ($(date +%s) - start) ))
  [ $left -lt 25 ] && { echo "stopped before order run $i" >> "$O/exp.txt"; break; }
  timeout $left build/exp_default/bench/bench_attention --dtypes=bf16 --shapes=$S --benchmark_filter="$F" \
    --benchmark_repetitions=3 --benchmark_out="$O/order_${i}_$f.json" --benchmark_out_format=json > "$O/order_${i}_$f.log" 2>&1
  echo "order $f ($i) rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
cd "$OUT" && tar czf o74.tgz o74 && rm -rf o74
