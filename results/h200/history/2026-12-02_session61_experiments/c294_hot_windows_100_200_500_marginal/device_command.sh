#!/usr/bin/env bash
# Session 61, c294: after c292 read 64 x 8192 and 256 x 4096 hot 1.28x and 1.25x slower at a 500-us window (K ~100)
# than at 50 (K ~10), where the microsecond rows and the floors moved by <= 4%: the same rows at windows 100, 200 and
# 500 and under marginal timing at 50 (t(2K) - t(K)), 3 repetitions, 2 passes: where along K the rate changes.
set -u
O=$OUT/o294; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c294.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
BENCH=bench_rmsnorm PASSES=2 REPETITIONS=3 SHAPES=1x4096,16x8192,64x8192,256x4096 \
  BENCH_FILTER='^(rmsnorm/vectorized/bf16/.*/hot|floor/empty_kernel_pdl/hot)' \
  timeout 400 scripts/gpu_experiments.sh "$O/exp" env:SOLBENCH_HOT_WINDOW_US=100 env:SOLBENCH_HOT_WINDOW_US=200 env:SOLBENCH_HOT_WINDOW_US=500 env:SOLBENCH_HOT_TIMING=marginal > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/exp/summary.txt" 2>/dev/null
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]" "$O"/exp/*_test.log | head -20
tail -30 "$O/exp.log"
for f in "$O"/exp/*.json "$O"/exp/*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o294.tgz o294 && rm -rf o294
