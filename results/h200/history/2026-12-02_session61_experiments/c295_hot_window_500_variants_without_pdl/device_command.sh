#!/usr/bin/env bash
# Session 61, c295: c294 read the hot rows that move data rising with K (16 x 8192: 1.06 us at a 50-us window, 1.26 at
# 500) where the PDL floor did not; whether it is the PDL launch (vectorized's decode-sized kernel) or the memory
# traffic: vectorized, warp_shuffle and block_reduce (no PDL) hot at 50 and 500, 16/64 x 8192 and 256 x 4096, 1 pass.
set -u
O=$OUT/o295; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c295.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
BENCH=bench_rmsnorm PASSES=1 REPETITIONS=3 SHAPES=16x8192,64x8192,256x4096 \
  BENCH_FILTER='^(rmsnorm/(vectorized|warp_shuffle|block_reduce)/bf16/.*/hot|floor/empty_kernel(_pdl)?/hot)' \
  timeout 300 scripts/gpu_experiments.sh "$O/exp" env:SOLBENCH_HOT_WINDOW_US=500 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/exp/summary.txt" 2>/dev/null
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]" "$O"/exp/*_test.log | head -20
tail -30 "$O/exp.log"
for f in "$O"/exp/*.json "$O"/exp/*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o295.tgz o295 && rm -rf o295
