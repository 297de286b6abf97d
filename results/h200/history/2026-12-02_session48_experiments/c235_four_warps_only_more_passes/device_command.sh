#!/usr/bin/env bash
# Session 48, c235: more passes of c234 builds (default, =1 at 2 and 4 warps), 1 x 4096 and 64 x 8192 (8 warps: identical PTX, a control of build effects).
set -u
O=$OUT/o235; mkdir -p "$O"; start=$(date +%s)
cp .devcall/s/c235.sh "$O/device_command.sh"
for n in default SB_RMSNORM_EXPERIMENT_1; do [ -x build/exp_$n/bench/bench_rmsnorm ] || { echo "no build $n"; exit 3; }; done
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
: > "$O/timings.txt"
for k in 1 2 3 4 5 6; do
  order="default SB_RMSNORM_EXPERIMENT_1"; ((k % 2 == 0)) && order="SB_RMSNORM_EXPERIMENT_1 default"
  for n in $order; do
    (( $(date +%s) - start > 150 )) && break 2
    echo "$k $n $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader)" >> "$O/gpu_state.txt"
    build/exp_$n/bench/bench_rmsnorm --shapes=1x4096,64x8192 --dtypes=bf16 \
      --benchmark_filter='^(rmsnorm/(vectorized|ref_copy)/|floor/empty_kernel_pdl)' --benchmark_repetitions=3 \
      --benchmark_display_aggregates_only=true --benchmark_out="$O/${n}_p$k.json" --benchmark_out_format=json 2>&1 |
      awk -v n="$n" -v k="$k" '/_median/ {sub("/manual_time_median", "", $1); print k, n, $1, $2}' >> "$O/timings.txt"
  done
  python3 scripts/experiment_summary.py "$O/timings.txt" > "$O/summary.txt" 2>&1
  echo "pass $k at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
cat "$O/exp.txt"; grep -E "vectorized|pdl|note" "$O/summary.txt" | head -60
cd "$OUT" && tar czf o235.tgz o235 && rm -rf o235
