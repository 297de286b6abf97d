#!/usr/bin/env bash
# Session 51, c247: the quickstart's sanitizer stage as it now stands (gpu_run.sh at df4bf1e: memcheck over the filter,
# racecheck over it less RepeatedRunsAreBitIdentical), on the H200, over the RMSNorm GPU tests and the WgmmaFlash suite
# (WgmmaFlash.ShapesReachThePersistentKernel, which the stage's old default filter and every earlier sanitizer run
# missed), 8 processes a tool, each cut at 420 s; tests and benchmarks skipped.
set -u
O=$OUT/o247; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c247.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cat .devcall/s/sha > "$O/sha.txt" 2>/dev/null
SKIP_TESTS=1 SKIP_BENCH=1 SKIP_CROSSCHECK=1 SANITIZER_FILTER='*RmsNorm*:WgmmaFlash.*' SANITIZER_SHARDS=8 SANITIZER_TIMEOUT=420 \
  timeout 560 scripts/gpu_run.sh "$O/run" > "$O/gpu_run.log" 2>&1
t "gpu_run.sh rc=$?"
build/release/tests/test_gpu --gtest_filter='*RmsNorm*:WgmmaFlash.*' --gtest_list_tests | grep -c '^  ' > "$O/n_tests.txt"
build/release/tests/test_gpu --gtest_filter='*RmsNorm*:WgmmaFlash.*-*RepeatedRunsAreBitIdentical*' --gtest_list_tests | grep -c '^  ' >> "$O/n_tests.txt"
cat "$O/exp.txt" "$O/n_tests.txt" "$O/gpu_run.log"
for f in "$O"/run/*.log "$O"/run/env.txt; do [ $(stat -c %s "$f") -gt 8192 ] && [ "$(basename $f)" != sanitizer.log ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o247.tgz o247 && rm -rf o247
