#!/usr/bin/env bash
# Session 14, call 3, clean checkout of HEAD (35f49ae, =35 adopted): the full bf16 run, then racecheck of
# the clustered decode tests in the time left (build/release/tests/test_gpu from the run's build).
set -u
O=$OUT/o49; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c49.sh "$O/device_command.sh"
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" > "$O/exp.txt"
REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 CROSSCHECK_RUNS=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 545 scripts/run_suite.sh > "$O/suite.log" 2>&1
echo "run_suite rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
mkdir -p "$O/run" && cp results/h200/*.json results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run/" 2>/dev/null
t=$(( 588 - ($(date +%s) - start) ))
if [ "$t" -gt 25 ]; then
  SOLBENCH_REQUIRE_GPU=1 timeout $t compute-sanitizer --tool racecheck --error-exitcode 9 build/release/tests/test_gpu \
    --gtest_filter='*DecodeSplitkShapes*bf16_b1_hq32_hkv8_d128_q1_kv4096_splits0:*DecodeSplitkForced*bf16_splits8_kv1000:*DecodeSplitkForced*bf16_splits3_kv1000:*DecodeSplitkExtreme*bf16_splits7:*DecodeSplitkForced*fp16_splits8_kv4097' \
    > "$O/racecheck.log" 2>&1
  echo "racecheck rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
fi
cd "$OUT" && tar czf o49.tgz o49 && rm -rf o49
