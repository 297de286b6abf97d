#!/usr/bin/env bash
# Session 13, call 1: decode_splitk_tc_fixed_cost.patch (=27, =29) against the default, two passes,
# then memcheck and racecheck of the =29 and =27 builds' decode tests in the time left.
set -u
O=$OUT/o43; mkdir -p "$O"
start=$(date +%s)
left() { echo $(( 585 - ($(date +%s) - start) )); }
cp .devcall/s/c43.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_splitk_tc_fixed_cost.patch TEST_FILTER='*DecodeSplitk*' \
  SHAPES=anchors,b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv16384,b256_hq32_hkv8_d128_q1_kv1024 \
  BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/(cold|hot)' \
  timeout 360 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=27 SB_DECODE_EXPERIMENT=29 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
RF='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*:*DecodeSplitk*splits12*:*DecodeSplitk*splits16*'
for n in 29 27; do
  b=build/exp_SB_DECODE_EXPERIMENT_$n/tests/test_gpu
  t=$(left); [ "$t" -gt 30 ] || break
  SOLBENCH_REQUIRE_GPU=1 timeout $((t - 10)) compute-sanitizer --tool memcheck --error-exitcode 9 $b --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_$n.log" 2>&1
  echo "memcheck $n rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
  t=$(left); [ "$t" -gt 30 ] || break
  SOLBENCH_REQUIRE_GPU=1 timeout $((t - 10)) compute-sanitizer --tool racecheck --error-exitcode 9 $b --gtest_filter="$RF" --gtest_brief=1 > "$O/racecheck_$n.log" 2>&1
  echo "racecheck $n rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
cd "$OUT" && tar czf o43.tgz o43 && rm -rf o43
