#!/usr/bin/env bash
# Session 49, c239: experiments/rmsnorm_short_reduce_same_binary.patch (rebased onto 9219b4f): vectorized_candidate, the
# short block sum at 8 and 16 warps too, against vectorized in one binary and one process (SAME_BINARY); 1 x 4096 is the
# control (the same code in both since 9219b4f); fp32 8192 rows run 16 warps; RMSNorm GPU tests of the build first.
set -u
O=$OUT/o239; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c239.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha); export SOLBENCH_GIT_COMMIT
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_short_reduce_same_binary.patch SAME_BINARY=vectorized_candidate:vectorized \
  TEST_FILTER='*RmsNorm*' PASSES=4 SHAPES=1x4096,1x8192,7x8192,64x8192 DTYPES=bf16,fp32 \
  timeout 400 scripts/gpu_experiments.sh "$O/exp" > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -vE '^[0-9]+ ' "$O/experiments.txt" | head -30
grep -E "FAILED|Failure" "$O"/exp/*_test.log | head -10
cat "$O/exp/summary.txt" 2>/dev/null | head -80
cd "$OUT" && tar czf o239.tgz o239 && rm -rf o239
