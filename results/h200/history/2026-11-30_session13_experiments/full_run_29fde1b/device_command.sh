#!/usr/bin/env bash
# Session 13, call 3: the full bf16 run of HEAD (=27 adopted; timing protocol v10, its first run) in a clean checkout, with the cross-check
# (one do_bench call a case, to fit the device time).
set -u
O=$OUT/o45; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c45.sh "$O/device_command.sh"
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" > "$O/exp.txt"
REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 CROSSCHECK_RUNS=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 575 scripts/run_suite.sh > "$O/suite.log" 2>&1
echo "run_suite rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd results/h200 && tar czf "$O/results.tgz" logs $(ls *.json REPORT.md 2>/dev/null) 2>/dev/null
gzip -f "$O/suite.log"
cd "$OUT" && tar czf o45.tgz o45 && rm -rf o45
