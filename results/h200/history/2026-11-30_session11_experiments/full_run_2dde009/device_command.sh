#!/usr/bin/env bash
# Session 11, call 2: the full bf16 run of a clean checkout of HEAD (cluster merge default, 100 ms warm-up).
set -u
O=/tmp/o36; mkdir -p "$O"
start=$(date +%s); R=$PWD
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" > "$O/exp.txt"
REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 CROSSCHECK_RUNS=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 565 scripts/run_suite.sh > "$O/suite.log" 2>&1
echo "run_suite rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp "$R/.devcall/s/c36.sh" "$O/device_command.sh"
tar czf "$OUT/o36.tgz" -C /tmp o36 -C /tmp/sh --exclude=results/h200/history results/h200
