#!/usr/bin/env bash
# Session 45, c224: experiments/rmsnorm_decode_split_rows.patch (the split's adoption, applied to the working tree of
# 97408d2 for this command only) on the H200: the Release build of test_cpu and test_gpu, the RMSNorm CPU tests,
# every RMSNorm GPU test (the new split shapes and RmsNormVectorizedSplit among them), then memcheck and racecheck over
# vectorized at the two new shapes and RmsNormVectorizedSplit (the sanitizers over all 470 ran on the measured =2 in c222).
set -u
O=$OUT/o224; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c224.sh "$O/device_command.sh"; git diff --stat > "$O/tree_diff.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 200 cmake --build build/release -j 16 --target test_cpu test_gpu > "$O/build.log" 2>&1; t "build rc=$?"
build/release/tests/test_cpu --gtest_filter='RmsNorm*' --gtest_brief=1 > "$O/test_cpu.log" 2>&1; t "test_cpu RmsNorm rc=$? $(grep -E 'PASSED|FAILED' "$O/test_cpu.log" | tail -2 | tr '\n' ' ')"
SOLBENCH_REQUIRE_GPU=1 timeout 100 build/release/tests/test_gpu --gtest_filter='*RmsNorm*' > "$O/tests.log" 2>&1; t "test_gpu RmsNorm rc=$? $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"
grep -E "RmsNormVectorizedSplit|_t64_h8192|_t40_h1024" "$O/tests.log" | grep -E "OK|FAILED" | head -60 > "$O/new_tests.txt"
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 build/release/tests/test_gpu --gtest_filter='*vectorized_*_t64_h8192:*vectorized_*_t40_h1024:RmsNormVectorizedSplit*' --gtest_brief=1 > "$O/$tool.log" 2>&1
  t "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/$tool.log" | tail -1) $(grep -E 'PASSED|FAILED' "$O/$tool.log" | tail -1)"
done
cat "$O/exp.txt" "$O/gpu_start.txt"; wc -l < "$O/new_tests.txt"; grep -E "FAILED|Failure" "$O/tests.log" | head; grep -B2 -A8 "error" "$O/build.log" | head -30
cd "$OUT" && tar czf o224.tgz o224 && rm -rf o224
