#!/usr/bin/env bash
# Session 17, call 4: rmsnorm_row_loop.patch (=22 x evict-first; =29/=30 two/four row groups a block in
# the bandwidth regime; =31 =29 + x evict-first) beside the default over the default shapes; memcheck and
# racecheck of =30 over the RMSNorm tests.
set -u
O=$OUT/o63; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c63.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_row_loop.patch SHAPES=default BENCH_FILTER='^rmsnorm/(vectorized|ref_copy|torch_rms_norm)/bf16/.*/(cold|hot)' SANITIZE=memcheck,racecheck SANITIZE_BUILDS='SB_RMSNORM_EXPERIMENT_30' SANITIZE_TIMEOUT=120 timeout 500 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=22 SB_RMSNORM_EXPERIMENT=29 SB_RMSNORM_EXPERIMENT=30 SB_RMSNORM_EXPERIMENT=31 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o63.tgz o63 && rm -rf o63
