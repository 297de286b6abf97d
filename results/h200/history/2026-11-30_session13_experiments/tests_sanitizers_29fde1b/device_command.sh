#!/usr/bin/env bash
# Session 13, call 2, clean checkout of HEAD (=27 adopted): the decode GPU tests and the harness self-test
# (hold_mhz's first GPU run), then memcheck and racecheck of the decode tests.
set -u
O=$OUT/o44; mkdir -p "$O"
start=$(date +%s); R=$PWD
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c44.sh "$O/device_command.sh"
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" > "$O/exp.txt"
cmake -S . -B build/t -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/build.log" 2>&1 &&
  cmake --build build/t -j 16 --target test_gpu test_harness_gpu >> "$O/build.log" 2>&1
log "build rc=$?"
SOLBENCH_REQUIRE_GPU=1 build/t/tests/test_gpu --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/test_decode.log" 2>&1
log "decode tests rc=$?"
SOLBENCH_REQUIRE_GPU=1 build/t/tests/test_harness_gpu > "$O/test_harness.log" 2>&1
log "harness tests rc=$?"
SOLBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 build/t/tests/test_gpu --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_decode.log" 2>&1
log "memcheck rc=$?"
RF='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*'
el=$(( $(date +%s) - start ))
SOLBENCH_REQUIRE_GPU=1 timeout $(( 585 - el )) compute-sanitizer --tool racecheck --error-exitcode 9 build/t/tests/test_gpu --gtest_filter="$RF" --gtest_brief=1 > "$O/racecheck_decode.log" 2>&1
log "racecheck rc=$?"
cd "$OUT" && tar czf o44.tgz o44 && rm -rf o44
