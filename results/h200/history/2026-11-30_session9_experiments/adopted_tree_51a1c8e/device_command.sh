#!/usr/bin/env bash
set -u
O=/tmp/o17; mkdir -p "$O"
start=$(date +%s)
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
echo "tree: $(cat .devcall/s/commit.txt) + the working tree's changes (session 9 adoption of =18)" > "$O/exp.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >> "$O/exp.txt" 2>&1
cmake -S . -B /tmp/b17 -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/build.log" 2>&1 &&
  timeout 200 cmake --build /tmp/b17 -j 16 --target test_gpu >> "$O/build.log" 2>&1
log "build rc=$?"
SOLBENCH_REQUIRE_GPU=1 timeout 90 /tmp/b17/tests/test_gpu --gtest_brief=1 > "$O/test_gpu_all.log" 2>&1
log "all GPU tests rc=$?"
SOLBENCH_REQUIRE_GPU=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 /tmp/b17/tests/test_gpu --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_decode.log" 2>&1
log "memcheck rc=$?"
el=$(( $(date +%s) - start ))
SOLBENCH_REQUIRE_GPU=1 timeout $(( 570 - el )) compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 1 /tmp/b17/tests/test_gpu --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/racecheck_decode.log" 2>&1
log "racecheck rc=$?"
cp .devcall/s/c17.sh "$O/device_command.sh"
tar czf "$OUT/o17.tgz" -C /tmp o17
