#!/usr/bin/env bash
# Session 19, call 4: the README test command (cmake --workflow --preset ci) in a clean checkout of HEAD (35c768d) on the H200.
set -u
O=$OUT/o72; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c72.sh "$O/device_command.sh"
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" > "$O/exp.txt"
timeout 285 cmake --workflow --preset ci > "$O/workflow.log" 2>&1
echo "workflow rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp build/ci/Testing/Temporary/LastTest.log "$O/" 2>/dev/null
cd "$OUT" && tar czf o72.tgz o72 && rm -rf o72
