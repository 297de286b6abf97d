#!/usr/bin/env bash
# Session 14, call 1: decode_splitk_merge_and_trace.patch (=31 push merge, =33/=34 phase trace) against
# the default, two passes, with the launch-floor rows; then memcheck and racecheck of =31 in the time left.
set -u
O=$OUT/o47; mkdir -p "$O"
start=$(date +%s)
left() { echo $(( 585 - ($(date +%s) - start) )); }
cp .devcall/s/c47.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_splitk_merge_and_trace.patch TEST_FILTER='*DecodeSplitk*' \
  SHAPES=anchors,b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv16384 \
  BENCH_FILTER='^(attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*|floor/.*)/(cold|hot)' \
  timeout 380 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=31 SB_DECODE_EXPERIMENT=33 SB_DECODE_EXPERIMENT=34 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
RF='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*'
b=build/exp_SB_DECODE_EXPERIMENT_31/tests/test_gpu
t=$(left)
if [ "$t" -gt 30 ]; then
  SOLBENCH_REQUIRE_GPU=1 timeout $((t - 10)) compute-sanitizer --tool memcheck --error-exitcode 9 $b --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_31.log" 2>&1
  echo "memcheck 31 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
fi
t=$(left)
if [ "$t" -gt 30 ]; then
  SOLBENCH_REQUIRE_GPU=1 timeout $((t - 10)) compute-sanitizer --tool racecheck --error-exitcode 9 $b --gtest_filter="$RF" --gtest_brief=1 > "$O/racecheck_31.log" 2>&1
  echo "racecheck 31 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
fi
cd "$OUT" && tar czf o47.tgz o47 && rm -rf o47
