#!/usr/bin/env bash
# Session 51, c248: the quickstart's sanitizer stage with its defaults as bb80a1b has them (gpu_run.sh: memcheck over every
# test of test_gpu, racecheck over every one but RepeatedRunsAreBitIdentical), tests and benchmarks skipped, 8 processes
# a tool (SANITIZER_SHARDS=8; the default is 4), each cut at 500 s: how long the stage takes on an H200 and whether
# it passes as shipped.
set -u
O=$OUT/o248; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c248.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cat .devcall/s/sha > "$O/sha.txt" 2>/dev/null
SKIP_TESTS=1 SKIP_BENCH=1 SKIP_CROSSCHECK=1 SANITIZER_SHARDS=8 SANITIZER_TIMEOUT=500 \
  timeout 575 scripts/gpu_run.sh "$O/run" > "$O/gpu_run.log" 2>&1
t "gpu_run.sh rc=$?"
build/release/tests/test_gpu --gtest_list_tests | grep -c '^  ' > "$O/n_tests.txt"
build/release/tests/test_gpu --gtest_filter='*-*RepeatedRunsAreBitIdentical*' --gtest_list_tests | grep -c '^  ' >> "$O/n_tests.txt"
cat "$O/exp.txt" "$O/n_tests.txt" "$O/gpu_run.log"
for f in "$O"/run/*.log "$O"/run/env.txt; do [ $(stat -c %s "$f") -gt 8192 ] && [ "$(basename $f)" != sanitizer.log ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o248.tgz o248 && rm -rf o248
