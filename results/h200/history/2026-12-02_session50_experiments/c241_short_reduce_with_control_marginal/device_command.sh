#!/usr/bin/env bash
# Session 50, c241: c240's patch (the short block sum at 8 and 16 warps as vectorized_candidate, and vectorized_control,
# vectorized.cu compiled again unchanged) timed hot under SOLBENCH_HOT_TIMING=marginal (the cost of one more launch:
# graphs of 2K and K launches, their difference over K), to settle c239/c240's disagreement at 64 x 8192 between net
# of G (candidate slower) and graph / K (level).
set -u
O=$OUT/o241; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c241.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha); export SOLBENCH_GIT_COMMIT
SOLBENCH_HOT_TIMING=marginal BENCH=bench_rmsnorm PATCH=.devcall/s/rmsnorm_short_reduce_with_control.patch \
  SAME_BINARY=vectorized_candidate,vectorized_control:vectorized CONTROL=vectorized_control TEST_FILTER='*RmsNorm*' PASSES=4 \
  SHAPES=1x4096,1x8192,7x8192,64x8192 BENCH_FILTER='^rmsnorm/vectorized(_candidate|_control)?/bf16/.*/hot' \
  timeout 230 scripts/gpu_experiments.sh "$O/exp" > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt"; grep -vE '^[0-9]+ ' "$O/experiments.txt" | head -20
cat "$O/exp/summary.txt" 2>/dev/null | head -60
cd "$OUT" && tar czf o241.tgz o241 && rm -rf o241
