#!/usr/bin/env bash
# Session 49, c240 (the session's last ~240 s of device time): experiments/rmsnorm_short_reduce_with_control.patch,
# vectorized_candidate (the short block sum at 8 and 16 warps) and vectorized_control (vectorized's code under another
# name, the A/A control) against vectorized in one process, hot, bf16, as many passes as the time allows.
set -u
O=$OUT/o240; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c240.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha); export SOLBENCH_GIT_COMMIT
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_short_reduce_with_control.patch \
  SAME_BINARY=vectorized_candidate,vectorized_control:vectorized TEST_FILTER='*RmsNorm*' PASSES=4 \
  SHAPES=1x4096,1x8192,7x8192,64x8192 BENCH_FILTER='^rmsnorm/vectorized(_candidate|_control)?/bf16/.*/hot' \
  timeout 125 scripts/gpu_experiments.sh "$O/exp" > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt"; grep -vE '^[0-9]+ ' "$O/experiments.txt" | head -20
cat "$O/exp/summary.txt" 2>/dev/null | head -40
cd "$OUT" && tar czf o240.tgz o240 && rm -rf o240
