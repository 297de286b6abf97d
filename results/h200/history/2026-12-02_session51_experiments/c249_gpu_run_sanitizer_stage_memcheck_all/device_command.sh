#!/usr/bin/env bash
# Session 51, c249 (c248, the whole default stage, was lost with its machine): the quickstart's sanitizer stage
# (gpu_run.sh at bb80a1b, tests and benchmarks skipped) with its default memcheck filter, every test of test_gpu, and
# racecheck narrowed to the RMSNorm tests less the repeats (SANITIZER_RACECHECK_FILTER; the attention ones were
# racechecked in c245/c246), 8 processes a tool, each cut at 330 s.
set -u
O=$OUT/o249; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c249.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cat .devcall/s/sha > "$O/sha.txt" 2>/dev/null
SKIP_TESTS=1 SKIP_BENCH=1 SKIP_CROSSCHECK=1 SANITIZER_SHARDS=8 SANITIZER_TIMEOUT=330 \
  SANITIZER_RACECHECK_FILTER='*RmsNorm*-*RepeatedRunsAreBitIdentical*' timeout 400 scripts/gpu_run.sh "$O/run" > "$O/gpu_run.log" 2>&1
t "gpu_run.sh rc=$?"
build/release/tests/test_gpu --gtest_list_tests | grep -c '^  ' > "$O/n_tests.txt"
cat "$O/exp.txt" "$O/n_tests.txt" "$O/gpu_run.log"
for f in "$O"/run/*.log "$O"/run/env.txt; do [ $(stat -c %s "$f") -gt 8192 ] && [ "$(basename $f)" != sanitizer.log ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o249.tgz o249 && rm -rf o249
