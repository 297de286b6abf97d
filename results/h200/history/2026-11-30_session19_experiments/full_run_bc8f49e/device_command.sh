#!/usr/bin/env bash
# Session 19, call 3, clean checkout of HEAD (bc8f49e: =1 and =53 adopted): the full bf16 run.
set -u
O=$OUT/o71; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c71.sh "$O/device_command.sh"
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" > "$O/exp.txt"
REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 CROSSCHECK_RUNS=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 578 scripts/run_suite.sh > "$O/suite.log" 2>&1
echo "run_suite rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
mkdir -p "$O/run" && cp results/h200/*.json results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run/" 2>/dev/null
cd "$OUT" && tar czf o71.tgz o71 && rm -rf o71
