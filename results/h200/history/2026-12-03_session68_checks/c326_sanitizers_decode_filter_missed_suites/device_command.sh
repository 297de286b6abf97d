#!/usr/bin/env bash
# Session 68, c326: compute-sanitizer memcheck and racecheck over every decode_splitk GPU test of test_gpu
# (DecodeSplitk*, DecodeSplitkLaunch.*, and AttentionGpu's decode_splitk cases) at HEAD, whose decode device code is
# latest.json's (9cdd933's kernels; the pairs' plan since 3611a58): the sanitizers over all of them on this code,
# where c287 and c301 covered the 8 tests whose plans pair and c244-c246 (9219b4f's kernels) the rest. Built
# without libtorch; 6 shards a tool through scripts/sanitize.sh (racecheck less the parameterized repeats).
set -u
O=$OUT/o326; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c326.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake --preset release -DSOLBENCH_WITH_TORCH=OFF > "$O/configure.log" 2>&1; t "configure rc=$?"
cmake --build --preset release --target test_gpu > "$O/build.log" 2>&1; t "build rc=$?"
B=build/release/tests/test_gpu
F='DecodeSplitk*:AllVariants/AttentionGpu.*/decode_splitk*'
$B --gtest_filter="$F" --gtest_list_tests > "$O/tests_listed.txt" 2>&1
echo "tests named by the filter: $(grep -c '^  ' "$O/tests_listed.txt")" >> "$O/exp.txt"
echo "racecheck's (less the parameterized repeats): $($B --gtest_filter="$F-*.RepeatedRunsAreBitIdentical/*" --gtest_list_tests | grep -c '^  ')" >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 100 $B --gtest_filter="$F" --gtest_brief=1 > "$O/tests.log" 2>&1
t "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$O/tests.log" | tr '\n' ' ')"
left=$(( 560 - ($(date +%s) - start) ))
SHARDS=6 TIMEOUT=$left scripts/sanitize.sh $B "$O/san" memcheck,racecheck "$F" > "$O/sanitize.log" 2>&1
t "sanitize rc=$?"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt" "$O/sanitize.log"
grep -B2 -A10 " error" "$O/build.log" | head -30
gzip -9 -n "$O/build.log" "$O/tests.log" "$O/tests_listed.txt"; for f in "$O"/san_*.log; do gzip -9 -n "$f"; done
cd "$OUT" && tar czf o326.tgz o326 && rm -rf o326
