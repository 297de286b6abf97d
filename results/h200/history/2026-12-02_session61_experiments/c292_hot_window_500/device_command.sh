#!/usr/bin/env bash
# Session 61, c292: the hot-window experiment (experiments/README.md, "Not yet measured", written in session 60
# before any run): the default build's bench_rmsnorm with SOLBENCH_HOT_WINDOW_US=500 against the default (50 us),
# vectorized bf16 hot and the empty-kernel floors (plain and PDL) hot, 5 shapes, 5 repetitions, 4 passes.
set -u
O=$OUT/o292; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c292.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
BENCH=bench_rmsnorm PASSES=4 REPETITIONS=5 SHAPES=1x4096,7x4096,64x8192,256x4096,1x8192 \
  BENCH_FILTER='^(rmsnorm/vectorized/bf16/.*/hot|floor/empty_kernel(_pdl)?/hot)' \
  timeout 470 scripts/gpu_experiments.sh "$O/exp" env:SOLBENCH_HOT_WINDOW_US=500 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/exp/summary.txt" 2>/dev/null
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]" "$O"/exp/*_test.log | head -20
tail -30 "$O/exp.log"
for f in "$O"/exp/*.json "$O"/exp/*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o292.tgz o292 && rm -rf o292
