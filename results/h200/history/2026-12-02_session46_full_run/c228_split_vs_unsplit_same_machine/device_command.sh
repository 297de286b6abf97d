#!/usr/bin/env bash
# Session 46, c228: the adopted split (c7b8ab0, default) against one block a row (SB_RMSNORM_EXPERIMENT=1 of
# .devcall/s/unsplit.patch: vectorized_blocks_per_row returns 1) on one H200, 3 passes, bf16, cold and hot (v122, graph / K),
# ref_copy at the same shapes as the builds' control: the full run c225-c227 showed 64 x 8192 cold 5.13 -> 5.08 us against
# session 44's run on another GPU, with vectorized / ref_copy unchanged (1.129 -> 1.128), where c221-c223 had 0.923-0.970.
set -u
O=$OUT/o228; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c228.sh "$O/device_command.sh"; cp .devcall/s/unsplit.patch "$O/"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
BENCH=bench_rmsnorm PATCH=.devcall/s/unsplit.patch TEST_FILTER='RmsNorm*-RmsNormVectorizedSplit*' PASSES=3 DTYPES=bf16 \
  SHAPES=1x4096,1x8192,64x8192 BENCH_FILTER='^rmsnorm/(vectorized|ref_copy)/' \
  timeout 195 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=1 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -vE '^(rmsnorm|floor)/' | head -20
grep -E "FAILED|Failure" "$O"/exp/*_test.log | head -10
cat "$O/exp/summary.txt" 2>/dev/null
cd "$OUT" && tar czf o228.tgz o228 && rm -rf o228
