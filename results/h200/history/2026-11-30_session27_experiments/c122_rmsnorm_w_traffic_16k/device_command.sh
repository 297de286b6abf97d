#!/usr/bin/env bash
# Session 27, c122: experiments/rmsnorm_w_traffic_16k.patch (SB_RMSNORM_EXPERIMENT=1, =2) beside the default
# build, two passes at the bandwidth shapes, cold. The GPU's UUID in gpu_start.txt.
set -u
O=$OUT/o122; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c122.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_w_traffic_16k.patch PASSES=2 \
SHAPES=32768x8192,4096x8192,65536x4096,16384x4096 DTYPES=bf16 \
BENCH_FILTER='^rmsnorm/(vectorized|ref_copy)/.*/cold' \
timeout 300 scripts/gpu_experiments.sh "$O/x" SB_RMSNORM_EXPERIMENT=1 SB_RMSNORM_EXPERIMENT=2 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$O/gpu_start.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/x/summary.txt" 2>/dev/null | head -40
grep -hE "PASSED|FAILED" "$O"/x/*_test.log | tail -6
tail -3 "$O/exp.log"
cd "$OUT" && tar czf o122.tgz o122 && rm -rf o122
