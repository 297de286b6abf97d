#!/usr/bin/env bash
# Session 45, c223: =2 of experiments/rmsnorm_decode_split_rows.patch against the default across the decode regime
# (rows up to 256, hidden up to 8192: split 4 where rows x 4 <= the SM count, 2 where rows x 2 fit, none above), bf16 and
# fp32, two passes, cold and hot under the committed protocol (v122, hot = graph replay / K); each build's RMSNorm GPU
# tests first; ref_copy at two shapes as the builds' control.
set -u
O=$OUT/o223; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c223.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_decode_split_rows.patch TEST_FILTER='*RmsNorm*' PASSES=2 DTYPES=bf16,fp32 \
  SHAPES=1x2048,1x4096,4x4096,32x4096,64x4096,128x4096,1x8192,64x8192 \
  BENCH_FILTER='^rmsnorm/(vectorized/|ref_copy/bf16/t(1_h4096|64_h8192)/)' \
  timeout 470 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=2 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -vE '^(rmsnorm|floor)/' | head -30
grep -E "FAILED|Failure" "$O"/exp/*_test.log | head -10
cat "$O/exp/summary.txt" 2>/dev/null | grep -v "^rmsnorm.* default " | head -90
cd "$OUT" && tar czf o223.tgz o223 && rm -rf o223
