#!/usr/bin/env bash
# Session 27, c118: experiments/rmsnorm_decode_pdl.patch (SB_RMSNORM_EXPERIMENT=1) beside the default build,
# three passes at the decode-sized shapes, cold and hot, with the empty-kernel floors; then memcheck and
# racecheck over the patched build's RMSNorm tests. The GPU's UUID in gpu_start.txt.
set -u
O=$OUT/o118; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c118.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_decode_pdl.patch PASSES=3 \
SHAPES=1x4096,64x8192,1x8192,256x4096 DTYPES=bf16 \
BENCH_FILTER='^(rmsnorm/(vectorized|ref_copy_kernel)|floor/empty_kernel)' \
SANITIZE=memcheck,racecheck \
timeout 540 scripts/gpu_experiments.sh "$O/x" SB_RMSNORM_EXPERIMENT=1 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$O/gpu_start.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/x/summary.txt" 2>/dev/null | head -60
tail -5 "$O/exp.log"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$O"/x/*_memcheck_*.log "$O"/x/*_racecheck_*.log 2>/dev/null
cd "$OUT" && tar czf o118.tgz o118 && rm -rf o118
