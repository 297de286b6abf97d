#!/usr/bin/env bash
# Session 61, c296: c295 read vectorized's hot rows rising with K (a 500-us window against 50) where block_reduce and
# warp_shuffle (no PDL) and both floors did not: vectorized built with SB_RMSNORM_PDL=0 against the default (PDL),
# hot at 16/64 x 8192, 256 x 4096 and 1 x 4096, once at the default window (50 us) and once with
# SOLBENCH_HOT_WINDOW_US=500 for every build, 1 pass each, 3 repetitions.
set -u
O=$OUT/o296; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c296.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
common() { BENCH=bench_rmsnorm PASSES=1 REPETITIONS=3 SHAPES=1x4096,16x8192,64x8192,256x4096 \
  BENCH_FILTER='^(rmsnorm/vectorized/bf16/.*/hot|floor/empty_kernel(_pdl)?/hot)' "$@"; }
common timeout 300 scripts/gpu_experiments.sh "$O/w50" SB_RMSNORM_PDL=0 > "$O/w50.log" 2>&1
echo "w50 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
SOLBENCH_HOT_WINDOW_US=500 common timeout 120 scripts/gpu_experiments.sh "$O/w500" SB_RMSNORM_PDL=0 > "$O/w500.log" 2>&1
echo "w500 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/w50/summary.txt" "$O/w500/summary.txt" 2>/dev/null
head -5 "$O/w50.log" "$O/w500.log"
for f in "$O"/w*/*.json "$O"/w*/*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o296.tgz o296 && rm -rf o296
