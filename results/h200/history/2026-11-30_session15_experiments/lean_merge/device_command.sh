#!/usr/bin/env bash
# Session 15, call 1: decode_splitk_lean_merge.patch (=37 lean st.async merge, =38/=39 phase traces of =37 and
# the default) against the default, two passes at three b1 shapes; then memcheck of =37 and racecheck of
# =37 and of the default (the full clustered filter, both at once, in the seconds left).
set -u
O=$OUT/o51; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c51.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_splitk_lean_merge.patch TEST_FILTER='*DecodeSplitk*' \
  SHAPES=b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv16384 \
  BENCH_FILTER='^(attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*|floor/.*)/(cold|hot)' \
  timeout 330 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=37 SB_DECODE_EXPERIMENT=38 SB_DECODE_EXPERIMENT=39 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
b=build/exp_SB_DECODE_EXPERIMENT_37/tests/test_gpu
SOLBENCH_REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $b --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_37.log" 2>&1
echo "memcheck 37 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
F='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*'
t=$(( 565 - ($(date +%s) - start) ))
if [ "$t" -gt 15 ]; then
  SOLBENCH_REQUIRE_GPU=1 timeout $t compute-sanitizer --tool racecheck --error-exitcode 9 $b --gtest_filter="$F" --gtest_brief=0 > "$O/racecheck_37.log" 2>&1 & p1=$!
  SOLBENCH_REQUIRE_GPU=1 timeout $t compute-sanitizer --tool racecheck --error-exitcode 9 build/exp_default/tests/test_gpu --gtest_filter="$F" --gtest_brief=0 > "$O/racecheck_default.log" 2>&1 & p2=$!
  wait $p1; echo "racecheck 37 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
  wait $p2; echo "racecheck default rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
fi
cd "$OUT" && tar czf o51.tgz o51 && rm -rf o51
