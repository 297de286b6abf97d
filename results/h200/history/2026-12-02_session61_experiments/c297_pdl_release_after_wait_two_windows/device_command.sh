#!/usr/bin/env bash
# Session 61, c297: c296 read vectorized's K-dependence (hot 1.08 -> 1.27 us at 16 x 8192 from a 50- to a 500-us
# window) gone without PDL (1.54 -> 1.57): experiments/rmsnorm_pdl_trigger_after_wait.patch, =1 releases the next grid
# after pdl_wait instead of before it, against the default, at both windows, 1 pass each; prediction in experiments/README.md.
set -u
O=$OUT/o297; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c297.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
common() { PATCH=experiments/rmsnorm_pdl_trigger_after_wait.patch BENCH=bench_rmsnorm PASSES=1 REPETITIONS=3 SHAPES=1x4096,16x8192,64x8192,256x4096 \
  BENCH_FILTER='^(rmsnorm/vectorized/bf16/.*/hot|floor/empty_kernel(_pdl)?/hot)' "$@"; }
common timeout 300 scripts/gpu_experiments.sh "$O/w50" SB_RMSNORM_PDL_TRIGGER_AFTER_WAIT=1 > "$O/w50.log" 2>&1
echo "w50 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
SOLBENCH_HOT_WINDOW_US=500 common timeout 120 scripts/gpu_experiments.sh "$O/w500" SB_RMSNORM_PDL_TRIGGER_AFTER_WAIT=1 > "$O/w500.log" 2>&1
echo "w500 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/w50/summary.txt" "$O/w500/summary.txt" 2>/dev/null
head -5 "$O/w50.log" "$O/w500.log"
for f in "$O"/w*/*.json "$O"/w*/*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o297.tgz o297 && rm -rf o297
