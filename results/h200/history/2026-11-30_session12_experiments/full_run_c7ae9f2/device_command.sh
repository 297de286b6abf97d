#!/usr/bin/env bash
# Session 12, call 4: the full bf16 run of HEAD (timing protocol v6) in a clean checkout, with the cross-check
# (one do_bench call a case, to fit the device time).
set -u
O=$OUT/o41; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c41.sh "$O/device_command.sh"
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" > "$O/exp.txt"
REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 CROSSCHECK_RUNS=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 575 scripts/run_suite.sh > "$O/suite.log" 2>&1
echo "run_suite rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd results/h200 && tar czf "$O/results.tgz" logs $(ls *.json REPORT.md 2>/dev/null) 2>/dev/null
gzip -f "$O/suite.log"
