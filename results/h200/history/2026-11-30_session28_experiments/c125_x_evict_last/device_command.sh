#!/usr/bin/env bash
# Session 28, c125: experiments/rmsnorm_x_evict_last.patch (SB_RMSNORM_EXPERIMENT=1, =2, =3) beside the
# default build, two passes, cold and hot, at the bandwidth and decode shapes; the copy as control.
set -u
O=$OUT/o125; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c125.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_x_evict_last.patch PASSES=2 \
SHAPES=32768x8192,16384x4096,65536x4096,65536x1024,4096x16384,4096x4096,2048x2048,8192x768,1x4096,64x8192,256x4096 DTYPES=bf16 \
BENCH_FILTER='^rmsnorm/(vectorized|ref_copy)/' \
timeout 520 scripts/gpu_experiments.sh "$O/x" SB_RMSNORM_EXPERIMENT=1 SB_RMSNORM_EXPERIMENT=2 SB_RMSNORM_EXPERIMENT=3 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$O/gpu_start.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/x/summary.txt" 2>/dev/null | head -70
grep -hE "PASSED|FAILED" "$O"/x/*_test.log | tail -8
tail -3 "$O/exp.log"
cd "$OUT" && tar czf o125.tgz o125 && rm -rf o125
