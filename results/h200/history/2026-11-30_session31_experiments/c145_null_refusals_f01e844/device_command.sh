#!/usr/bin/env bash
# Session 31, c145: f01e844 (null-range refusals of ref_kv_read's helpers): the two ref_kv_read GPU tests, and memcheck over them.
set -u
O=$OUT/o145; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c145.sh "$O/device_command.sh"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 200 cmake --build build/release -j 16 --target test_gpu test_harness_gpu > "$O/build.log" 2>&1; t "build rc=$?"
T=build/release/tests/test_gpu; H=build/release/tests/test_harness_gpu
SOLBENCH_REQUIRE_GPU=1 timeout 60 $T --gtest_filter='*AttentionKvRead*' > "$O/tests.log" 2>&1; t "test_gpu rc=$? $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"
SOLBENCH_REQUIRE_GPU=1 timeout 60 $H --gtest_filter='*ReadSum*:*CopyKernelCopiesExactly*' > "$O/tests_harness.log" 2>&1; t "test_harness_gpu rc=$? $(grep -E 'PASSED|FAILED' "$O/tests_harness.log" | tail -2 | tr '\n' ' ')"
SOLBENCH_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='*AttentionKvRead*' > "$O/memcheck_kvread.log" 2>&1 &
SOLBENCH_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $H --gtest_filter='*ReadSum*:*CopyKernelCopiesExactly*' > "$O/memcheck_harness.log" 2>&1 &
wait
for f in "$O"/memcheck_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY' $f | tail -1) $(grep -E 'PASSED|FAILED' $f | tail -1)" >> "$O/exp.txt"; done
cat "$O/exp.txt"
cd "$OUT" && tar czf o145.tgz o145 && rm -rf o145
