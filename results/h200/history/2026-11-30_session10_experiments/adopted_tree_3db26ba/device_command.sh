#!/usr/bin/env bash
set -u
O=/tmp/o33; mkdir -p "$O"
start=$(date +%s)
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
echo "tree: $(cat .devcall/s/commit.txt) (session 10 adoption of the cluster merge)" > "$O/exp.txt"
cmake -S . -B /tmp/b33 -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/build.log" 2>&1 &&
  timeout 200 cmake --build /tmp/b33 -j 16 --target test_gpu >> "$O/build.log" 2>&1
log "build rc=$?"
SOLBENCH_REQUIRE_GPU=1 timeout 90 /tmp/b33/tests/test_gpu --gtest_brief=1 > "$O/test_gpu_all.log" 2>&1
log "all GPU tests rc=$?"
SOLBENCH_REQUIRE_GPU=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 /tmp/b33/tests/test_gpu --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_decode.log" 2>&1
log "memcheck rc=$?"
F='*Forced*splits3_*:*Forced*splits7_*:*Forced*splits8_*:*Shapes*splits3:*Shapes*kv4096*splits0:*Extreme*splits0:*Extreme*splits7:*RepeatedRuns*'
el=$(( $(date +%s) - start ))
SOLBENCH_REQUIRE_GPU=1 timeout $(( 330 - el )) compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 1 /tmp/b33/tests/test_gpu --gtest_filter="$F" --gtest_brief=1 > "$O/racecheck_cluster.log" 2>&1
log "racecheck rc=$?"
SOLBENCH_REQUIRE_GPU=1 /tmp/b33/tests/test_gpu --gtest_filter="$F" --gtest_list_tests > "$O/racecheck_cluster_tests.txt" 2>&1
cp .devcall/s/c33.sh "$O/device_command.sh"
tar czf "$OUT/o33.tgz" -C /tmp o33
