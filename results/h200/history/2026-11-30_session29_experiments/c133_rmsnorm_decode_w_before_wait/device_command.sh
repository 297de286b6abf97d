#!/usr/bin/env bash
# Session 29, c133: experiments/rmsnorm_decode_w_before_wait.patch (SB_RMSNORM_EXPERIMENT=1: the decode-sized
# kernel loads w before griddepcontrol.wait, x after) beside the default, three passes, cold and hot, at the
# decode-sized shapes, with the copy kernel and the empty kernels (plain and PDL) as controls; its RMSNorm
# GPU tests, then memcheck and racecheck over them.
set -u
O=$OUT/o133; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c133.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_decode_w_before_wait.patch PASSES=3 \
SHAPES=1x4096,64x8192,1x8192,256x4096 DTYPES=bf16 \
BENCH_FILTER='^(rmsnorm/(vectorized|ref_copy_kernel)/|floor/empty_kernel)' \
SANITIZE=memcheck,racecheck SANITIZE_TIMEOUT=150 \
timeout 400 scripts/gpu_experiments.sh "$O/x" SB_RMSNORM_EXPERIMENT=1 > "$O/exp.log" 2>&1
t "experiments rc=$?"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$O/gpu_start.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/x/summary.txt" 2>/dev/null | head -40
grep -hE "PASSED|FAILED" "$O"/x/*_test.log | tail -4
for f in "$O"/x/*memcheck*.log "$O"/x/*racecheck*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'PASSED|FAILED' $f | tail -1)"; done
tail -3 "$O/exp.log"
cd "$OUT" && tar czf o133.tgz o133 && rm -rf o133
