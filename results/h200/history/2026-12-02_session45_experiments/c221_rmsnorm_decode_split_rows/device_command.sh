#!/usr/bin/env bash
# Session 45, c221: experiments/rmsnorm_decode_split_rows.patch (=1: a decode-sized row of 4 vectors a lane split over
# 2 blocks where rows x 2 <= the SM count; =2: over 4 where rows x 4 fit, else 2), each block reading all of x and
# writing its part; against the default, three passes over the decode-sized shapes, cold, and hot under
# SOLBENCH_HOT_TIMING=marginal (c220: the per-launch cost, K-independent); each build's RMSNorm GPU tests first.
set -u
O=$OUT/o221; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c221.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
SOLBENCH_HOT_TIMING=marginal BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_decode_split_rows.patch TEST_FILTER='*RmsNorm*' PASSES=3 \
  SHAPES=1x4096,7x4096,1x8192,64x8192,256x4096 BENCH_FILTER='^(rmsnorm/(vectorized|ref_copy)/|floor/empty)' \
  timeout 560 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=1 SB_RMSNORM_EXPERIMENT=2 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -vE '^(rmsnorm|floor)/' | head -30
grep -E "FAILED|Failure" "$O"/exp/*_test.log | head -10
grep -E "spill|error" "$O"/exp/*_build.log | head
cat "$O/exp/summary.txt" 2>/dev/null | head -90
cd "$OUT" && tar czf o221.tgz o221 && rm -rf o221
