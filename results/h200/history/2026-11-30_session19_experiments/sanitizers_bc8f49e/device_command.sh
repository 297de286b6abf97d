#!/usr/bin/env bash
# Session 19, call 2: compute-sanitizer over the adopted decode change (bc8f49e): memcheck over the decode GPU
# tests (4 shards), racecheck over session 13's 51-test selection (4 shards), concurrently.
set -u
O=$OUT/o70; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c70.sh "$O/device_command.sh"
cmake -S . -B build/san -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/build.log" 2>&1 && cmake --build build/san -j 16 --target test_gpu >> "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
T=build/san/tests/test_gpu
RF='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*'
left=$(( 560 - ($(date +%s) - start) ))
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout $left compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_$k.log" 2>&1 &
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout $left compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter="$RF" --gtest_brief=1 > "$O/racecheck_$k.log" 2>&1 &
done
wait
for f in "$O"/memcheck_*.log "$O"/racecheck_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'PASSED|FAILED' $f | tail -1)" >> "$O/exp.txt"; done
echo "done at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o70.tgz o70 && rm -rf o70
