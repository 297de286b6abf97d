#!/usr/bin/env bash
# Session 14, call 2: decode_splitk_async_merge.patch (=35 st.async merge, =36 its phase trace) against the
# default, two passes at three b1 shapes; then memcheck and (a subset) racecheck of =35.
set -u
O=$OUT/o48; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c48.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_splitk_async_merge.patch TEST_FILTER='*DecodeSplitk*' \
  SHAPES=b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv16384 \
  BENCH_FILTER='^(attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*|floor/.*)/(cold|hot)' \
  timeout 300 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=35 SB_DECODE_EXPERIMENT=36 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
b=build/exp_SB_DECODE_EXPERIMENT_35/tests/test_gpu
SOLBENCH_REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $b --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_35.log" 2>&1
echo "memcheck 35 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 110 compute-sanitizer --tool racecheck --error-exitcode 9 $b --gtest_filter='*DecodeSplitk*splits3*:*DecodeSplitk*splits8*:*DecodeSplitkExtreme*' --gtest_brief=1 > "$O/racecheck_35.log" 2>&1
echo "racecheck 35 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o48.tgz o48 && rm -rf o48
