#!/usr/bin/env bash
# Session 15, call 2, clean checkout of HEAD (the lean cluster merge adopted): build test_gpu; the decode GPU
# tests; memcheck of them; racecheck of the 51 clustered decode tests in 4 concurrent shards.
set -u
O=$OUT/o52; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c52.sh "$O/device_command.sh"
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" > "$O/exp.txt"
cmake -S . -B build/r -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/build.log" 2>&1 && ninja -C build/r test_gpu >> "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
b=build/r/tests/test_gpu
SOLBENCH_REQUIRE_GPU=1 timeout 90 $b --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/test_decode.log" 2>&1
echo "decode tests rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
t=$(( 430 - ($(date +%s) - start) ))
rc() { SOLBENCH_REQUIRE_GPU=1 timeout $t compute-sanitizer --tool racecheck --error-exitcode 9 $b --gtest_filter="$1" --gtest_brief=0 > "$O/racecheck_$2.log" 2>&1; echo "racecheck $2 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
rc '*DecodeSplitk.RepeatedRuns*' repeated &
rc '*DecodeSplitkForced*splits3*:*DecodeSplitkForced*splits7*:*DecodeSplitkForced*splits8*:*DecodeSplitkExtreme*' forced_extreme &
rc '*DecodeSplitkShapes*bf16*splits3:*DecodeSplitkShapes*bf16*kv4096_splits0' shapes_bf16 &
rc '*DecodeSplitkShapes*fp16*splits3:*DecodeSplitkShapes*fp16*kv4096_splits0' shapes_fp16 &
SOLBENCH_REQUIRE_GPU=1 timeout $t compute-sanitizer --tool memcheck --error-exitcode 9 $b --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck.log" 2>&1
echo "memcheck rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
wait
cd "$OUT" && tar czf o52.tgz o52 && rm -rf o52
