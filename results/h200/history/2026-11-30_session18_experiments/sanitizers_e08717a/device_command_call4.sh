#!/usr/bin/env bash
# Session 18, call 4: racecheck of c66's shard 0 (cut at 200 s there), as shards 0 and 4 of 8 (the same tests), in parallel.
set -u
O=$OUT/o68; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c68.sh "$O/device_command.sh"
cmake --build --preset release --target test_gpu > "$O/build.log" 2>&1 || { cmake --preset release >> "$O/build.log" 2>&1 && cmake --build --preset release --target test_gpu >> "$O/build.log" 2>&1; }
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
T=build/release/tests/test_gpu
RF='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*'
left=$(( 225 - ($(date +%s) - start) ))
for k in 0 4; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout $left compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter="$RF" > "$O/racecheck_8_$k.log" 2>&1 &
done
wait
for f in "$O"/racecheck_*.log; do echo "$(basename $f): $(grep -E 'RACECHECK SUMMARY' $f | tail -1) $(grep -E 'PASSED|FAILED' $f | tail -1)" >> "$O/exp.txt"; done
echo "done at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o68.tgz o68 && rm -rf o68
