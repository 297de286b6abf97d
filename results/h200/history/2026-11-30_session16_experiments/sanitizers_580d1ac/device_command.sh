#!/usr/bin/env bash
# Session 16, call 4, clean checkout of HEAD (w in registers adopted): build test_gpu; the RMSNorm GPU tests;
# memcheck and racecheck of them, 4 concurrent shards each.
set -u
O=$OUT/o58; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c58.sh "$O/device_command.sh"
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" > "$O/exp.txt"
cmake -S . -B build/r -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/build.log" 2>&1 && ninja -C build/r test_gpu >> "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
b=build/r/tests/test_gpu
SOLBENCH_REQUIRE_GPU=1 timeout 60 $b --gtest_filter='*RmsNorm*' --gtest_brief=1 > "$O/test_rmsnorm.log" 2>&1
echo "rmsnorm tests rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for tool in memcheck racecheck; do for s in 0 1 2 3; do
  ( GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s SOLBENCH_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $b --gtest_filter='*RmsNorm*' --gtest_brief=1 > "$O/${tool}_$s.log" 2>&1
    echo "$tool shard $s rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt" ) &
done; done
wait
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|PASSED\|FAILED" "$O"/memcheck_*.log "$O"/racecheck_*.log >> "$O/exp.txt"
cd "$OUT" && tar czf o58.tgz o58 && rm -rf o58
