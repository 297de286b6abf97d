#!/usr/bin/env bash
# Session 45, c222: =2 of experiments/rmsnorm_decode_split_rows.patch (c221 below): one more pass at 1 x 4096 and 64 x 8192, then memcheck and racecheck over its RMSNorm GPU tests.
# 2 blocks where rows x 2 <= the SM count; =2: over 4 where rows x 4 fit, else 2), each block reading all of x and
# writing its part; against the default, three passes over the decode-sized shapes, cold, and hot under
# SOLBENCH_HOT_TIMING=marginal (c220: the per-launch cost, K-independent); each build's RMSNorm GPU tests first.
set -u
O=$OUT/o222; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c222.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
SOLBENCH_HOT_TIMING=marginal BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_decode_split_rows.patch TEST_FILTER='*RmsNorm*' PASSES=1 SANITIZE=memcheck,racecheck SANITIZE_TIMEOUT=200 \
  SHAPES=1x4096,64x8192 BENCH_FILTER='^(rmsnorm/(vectorized|ref_copy)/|floor/empty)' \
  timeout 560 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=2 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -vE '^(rmsnorm|floor)/' | head -30
grep -E "FAILED|Failure" "$O"/exp/*_test.log | head -10
grep -E "spill|error" "$O"/exp/*_build.log | head
cat "$O/exp/summary.txt" 2>/dev/null | head -90
cd "$OUT" && tar czf o222.tgz o222 && rm -rf o222
