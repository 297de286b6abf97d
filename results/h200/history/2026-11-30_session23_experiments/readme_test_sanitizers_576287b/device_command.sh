#!/usr/bin/env bash
# Session 23, call 2: at 576287bacd77e08fee354b71a5ad615217e0aa45, the README's test command on the H200 (GPU tests required), then
# compute-sanitizer over that build's decode GPU tests: memcheck over all of them, racecheck over session 13's
# 51-test selection, 8 shards each.
set -u
O=$OUT/o93; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c93.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf build/ci
SOLBENCH_GIT_COMMIT=576287bacd77e08fee354b71a5ad615217e0aa45 timeout 330 cmake --workflow --preset ci > "$O/readme_test.log" 2>&1
echo "readme test rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp build/ci/Testing/Temporary/LastTest.log "$O/" 2>/dev/null
san() {  # tool filter tag timeout
  for k in 0 1 2 3 4 5 6 7; do
    GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout "$4" \
      compute-sanitizer --tool "$1" --error-exitcode 9 build/ci/tests/test_gpu --gtest_filter="$2" > "$O/${3}_$k.log" 2>&1 &
  done
  wait
}
san memcheck '*DecodeSplitk*' memcheck 120
echo "memcheck done at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
san racecheck '*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*' racecheck 230
echo "racecheck done at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for f in "$O"/memcheck_*.log "$O"/racecheck_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $f | tr '\n' ' ')"; done >> "$O/exp.txt"
gzip -9 -n "$O/readme_test.log" "$O/LastTest.log" 2>/dev/null
cd "$OUT" && tar czf o93.tgz o93 && rm -rf o93
