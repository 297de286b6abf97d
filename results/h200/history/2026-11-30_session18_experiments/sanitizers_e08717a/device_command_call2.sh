#!/usr/bin/env bash
# Session 18, call 2: the adopted =50 (e08717a): the decode GPU tests, then compute-sanitizer memcheck over
# them and racecheck over session 13's selection, four shards each, all eight at once.
set -u
O=$OUT/o66; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c66.sh "$O/device_command.sh"
git log --oneline -1 > "$O/exp.txt"
cmake --preset release > "$O/build.log" 2>&1 && cmake --build --preset release --target test_gpu >> "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
T=build/release/tests/test_gpu
SOLBENCH_REQUIRE_GPU=1 timeout 60 $T --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/test.log" 2>&1
echo "tests rc=$? at $(( $(date +%s) - start )) s: $(grep -E 'PASSED|FAILED' "$O/test.log" | tail -2 | tr '\n' ' ')" >> "$O/exp.txt"
RF='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*'
pids=()
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_$k.log" 2>&1 & pids+=($!)
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter="$RF" --gtest_brief=1 > "$O/racecheck_$k.log" 2>&1 & pids+=($!)
done
for p in "${pids[@]}"; do wait $p; echo "pid rc=$?" >> "$O/exp.txt"; done
for f in "$O"/memcheck_*.log "$O"/racecheck_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'PASSED|FAILED' $f | tail -1)" >> "$O/exp.txt"; done
echo "done at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o66.tgz o66 && rm -rf o66
