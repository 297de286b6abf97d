#!/usr/bin/env bash
# Session 68, c327 (c326 again: its filter 'DecodeSplitk*' missed the parameterized suites, whose names begin
# with their instantiation, e.g. SplitsAndLengths/DecodeSplitkForced; c326 sanitized 22 tests, clean): compute-sanitizer memcheck and racecheck over every decode_splitk GPU test of test_gpu
# (DecodeSplitk*, DecodeSplitkLaunch.*, and AttentionGpu's decode_splitk cases) at HEAD, whose decode device code is
# latest.json's (9cdd933's kernels; the pairs' plan since 3611a58): the sanitizers over all of them on this code,
# where c287 and c301 covered the 8 tests whose plans pair and c244-c246 (9219b4f's kernels) the rest. Built
# without libtorch; through scripts/sanitize.sh (racecheck less the parameterized repeats), memcheck in 4 shards and
# racecheck in 10, the two at once.
set -u
O=$OUT/o327; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c327.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake --preset release -DSOLBENCH_WITH_TORCH=OFF > "$O/configure.log" 2>&1; t "configure rc=$?"
cmake --build --preset release --target test_gpu > "$O/build.log" 2>&1; t "build rc=$?"
B=build/release/tests/test_gpu
F='*DecodeSplitk*:AllVariants/AttentionGpu.*/decode_splitk*'
$B --gtest_filter="$F" --gtest_list_tests > "$O/tests_listed.txt" 2>&1
echo "tests named by the filter: $(grep -c '^  ' "$O/tests_listed.txt")" >> "$O/exp.txt"
echo "racecheck's (less the parameterized repeats): $($B --gtest_filter="$F-*.RepeatedRunsAreBitIdentical/*" --gtest_list_tests | grep -c '^  ')" >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 150 $B --gtest_filter="$F" --gtest_brief=1 > "$O/tests.log" 2>&1
t "tests rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$O/tests.log" | tr '\n' ' ')"
left=$(( 560 - ($(date +%s) - start) ))
SHARDS=4 TIMEOUT=$left scripts/sanitize.sh $B "$O/san" memcheck "$F" > "$O/sanitize_memcheck.log" 2>&1 &
pm=$!
SHARDS=10 TIMEOUT=$left scripts/sanitize.sh $B "$O/san" racecheck "$F" > "$O/sanitize_racecheck.log" 2>&1 &
pr=$!
wait $pm; t "memcheck rc=$?"
wait $pr; t "racecheck rc=$?"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt" "$O/sanitize_memcheck.log" "$O/sanitize_racecheck.log"
grep -B2 -A10 " error" "$O/build.log" | head -30
gzip -9 -n "$O/build.log" "$O/tests.log" "$O/tests_listed.txt"; for f in "$O"/san_*.log; do gzip -9 -n "$f"; done
cd "$OUT" && tar czf o327.tgz o327 && rm -rf o327
