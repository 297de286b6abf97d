#!/usr/bin/env bash
# Session 51, c245: the first device command over the whole tracked tree (no part of history/ moved aside, 547d6dd
# gzipped it under 64 MiB), and the first run of scripts/sanitize.sh on a GPU: racecheck over every attention GPU
# test of test_gpu (the 652 c244 covered; c244's memcheck of them was clean, its racecheck cut at 370 s with 4
# shards), now 14 concurrent shards on the 16 cores, each cut at 470 s. The logs keep GoogleTest's per-test times.
set -u
O=$OUT/o245; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c245.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git status --short > "$O/tree_status.txt" 2>&1; du -sb --exclude=.git --exclude=build --exclude=.devcall . > "$O/tree_bytes.txt"
cat .devcall/s/sha > "$O/sha.txt" 2>/dev/null
cmake --preset release -DSOLBENCH_WITH_TORCH=OFF > "$O/configure.log" 2>&1; t "configure rc=$?"
cmake --build --preset release --target test_gpu > "$O/build.log" 2>&1; t "build rc=$?"
F='*Attention*:*DecodeSplitk*:*TiledFlash*:*WgmmaFlash*'
build/release/tests/test_gpu --gtest_filter="$F" --gtest_list_tests | grep -c '^  ' > "$O/n_tests.txt"
SHARDS=14 TIMEOUT=470 scripts/sanitize.sh build/release/tests/test_gpu "$O/san" racecheck "$F" > "$O/sanitize.txt" 2>&1
t "sanitize.sh rc=$?"
cat "$O/exp.txt" "$O/n_tests.txt" "$O/sanitize.txt" "$O/tree_bytes.txt"
for f in "$O"/san_*.log; do grep -hoE '^\[       OK \] .*\(([0-9]+) ms\)' "$f"; done | sed -E 's/.*\] (.*) \(([0-9]+) ms\)/\2 \1/' | sort -rn | head -15
for f in "$O"/san_*.log; do gzip -9 -n "$f"; done
cd "$OUT" && tar czf o245.tgz o245 && rm -rf o245
