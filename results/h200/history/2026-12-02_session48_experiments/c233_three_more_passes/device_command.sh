#!/usr/bin/env bash
# Session 48, c233: more passes of c232's builds (left on the machine), default, =1 and =3, order reversed every other pass.
set -u
O=$OUT/o233; mkdir -p "$O"; start=$(date +%s)
cp .devcall/s/c233.sh "$O/device_command.sh"
for n in default SB_RMSNORM_EXPERIMENT_1 SB_RMSNORM_EXPERIMENT_3; do [ -x build/exp_$n/bench/bench_rmsnorm ] || { echo "no build $n"; exit 3; }; done
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
: > "$O/timings.txt"
for k in 1 2 3 4 5 6; do
  order="default SB_RMSNORM_EXPERIMENT_1 SB_RMSNORM_EXPERIMENT_3"; ((k % 2 == 0)) && order="SB_RMSNORM_EXPERIMENT_3 SB_RMSNORM_EXPERIMENT_1 default"
  for n in $order; do
    (( $(date +%s) - start > 480 )) && break 2
    echo "$k $n $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader)" >> "$O/gpu_state.txt"
    build/exp_$n/bench/bench_rmsnorm --shapes=1x4096,1x8192,7x4096,64x4096,64x8192 --dtypes=bf16 \
      --benchmark_filter='^(rmsnorm/(vectorized|ref_copy)/|floor/empty_kernel_pdl)' --benchmark_repetitions=3 \
      --benchmark_display_aggregates_only=true --benchmark_out="$O/${n}_p$k.json" --benchmark_out_format=json 2>&1 |
      awk -v n="$n" -v k="$k" '/_median/ {sub("/manual_time_median", "", $1); print k, n, $1, $2}' >> "$O/timings.txt"
  done
  python3 scripts/experiment_summary.py "$O/timings.txt" > "$O/summary.txt" 2>&1
  echo "pass $k at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
cat "$O/exp.txt"; grep -E "vectorized|pdl|note" "$O/summary.txt" | head -60
cd "$OUT" && tar czf o233.tgz o233 && rm -rf o233
