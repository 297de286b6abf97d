#!/usr/bin/env bash
# Session 28, c126: experiments/rmsnorm_x_evict_last.patch (SB_RMSNORM_EXPERIMENT=1, =4, =5, =6) beside the
# default build, two passes, cold, at the 16 KB-row shapes (bf16 8192, fp32 4096) and 16384 x 4096 bf16; memcheck and racecheck of =1 and =6.
set -u
O=$OUT/o126; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c126.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_x_evict_last.patch PASSES=2 \
SHAPES=32768x8192,4096x8192,16384x4096 DTYPES=bf16,fp32 \
BENCH_FILTER='^rmsnorm/vectorized/.*/cold' SANITIZE=memcheck,racecheck SANITIZE_TIMEOUT=200 \
SANITIZE_BUILDS='SB_RMSNORM_EXPERIMENT_1 SB_RMSNORM_EXPERIMENT_6' \
timeout 565 scripts/gpu_experiments.sh "$O/x" SB_RMSNORM_EXPERIMENT=1 SB_RMSNORM_EXPERIMENT=4 SB_RMSNORM_EXPERIMENT=5 SB_RMSNORM_EXPERIMENT=6 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$O/gpu_start.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/x/summary.txt" 2>/dev/null | head -70
grep -hE "PASSED|FAILED" "$O"/x/*_test.log | tail -8; tail -n 2 "$O"/x/*memcheck*.log "$O"/x/*racecheck*.log 2>/dev/null | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|==>" | head -20
tail -3 "$O/exp.log"
cd "$OUT" && tar czf o126.tgz o126 && rm -rf o126
