#!/usr/bin/env bash
# Session 51, c246: racecheck over the 38 attention GPU tests that c245 did not reach and that are not
# RepeatedRunsAreBitIdentical (whose launches are MatchesReference's for the same parameters and data, twice), by
# explicit name (c246_filter.txt), through scripts/sanitize.sh, 16 concurrent shards, each cut at 500 s. With c245's
# 430 completed tests this covers every non-repeat attention test.
set -u
O=$OUT/o246; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c246.sh "$O/device_command.sh"; cp .devcall/s/c246_filter.txt "$O/filter.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cat .devcall/s/sha > "$O/sha.txt" 2>/dev/null
cmake --preset release -DSOLBENCH_WITH_TORCH=OFF > "$O/configure.log" 2>&1; t "configure rc=$?"
cmake --build --preset release --target test_gpu > "$O/build.log" 2>&1; t "build rc=$?"
F=$(cat .devcall/s/c246_filter.txt)
build/release/tests/test_gpu --gtest_filter="$F" --gtest_list_tests | grep -c '^  ' > "$O/n_tests.txt"
SHARDS=16 TIMEOUT=500 scripts/sanitize.sh build/release/tests/test_gpu "$O/san" racecheck "$F" > "$O/sanitize.txt" 2>&1
t "sanitize.sh rc=$?"
cat "$O/exp.txt" "$O/n_tests.txt" "$O/sanitize.txt"
for f in "$O"/san_*.log; do grep -hoE '^\[       OK \] .*\(([0-9]+) ms\)' "$f"; done | sed -E 's/.*\] (.*) \(([0-9]+) ms\)/\2 \1/' | sort -rn | head -8
for f in "$O"/san_*.log; do gzip -9 -n "$f"; done
cd "$OUT" && tar czf o246.tgz o246 && rm -rf o246
