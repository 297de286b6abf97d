#!/usr/bin/env bash
# Session 15, call 4: the README's test command in a clean checkout of HEAD on the H200.
set -u
O=$OUT/o54; mkdir -p "$O"
start=$(date +%s)
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c54.sh "$O/device_command.sh"
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" >> "$O/exp.txt"
timeout 330 cmake --workflow --preset ci > "$O/readme_test.log" 2>&1
log "cmake --workflow --preset ci rc=$?"
grep -E "tests passed|tests failed|H200" "$O/readme_test.log" | tail -5 >> "$O/exp.txt"
gzip -9 -n -f "$O/readme_test.log"
cd "$OUT" && tar czf o54.tgz o54 && rm -rf o54
