#!/usr/bin/env bash
# Session 36, c177: experiments/rmsnorm_decode_cluster.patch (=2, =4: the decode-sized row over a cluster of 2 or 4
# blocks) against the default, three passes over the decode-sized shapes, its tests, memcheck and racecheck.
set -u
O=$OUT/o177; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c177.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_decode_cluster.patch TEST_FILTER='*RmsNorm*' PASSES=3 \
  SHAPES=1x4096,7x4096,1x8192,64x8192,256x4096 BENCH_FILTER='^(rmsnorm/(vectorized|ref_copy)/|floor/empty)' \
  SANITIZE=memcheck,racecheck SANITIZE_TIMEOUT=250 \
  timeout 570 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=2 SB_RMSNORM_EXPERIMENT=4 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -vE '^(rmsnorm|floor)/' | head -30
grep -E "FAILED|Failure" "$O"/exp/*_test.log | head -10
grep -E "spill|error" "$O"/exp/*_build.log | head
cat "$O/exp/summary.txt" 2>/dev/null | head -80
cd "$OUT" && tar czf o177.tgz o177 && rm -rf o177
