#!/usr/bin/env bash
# Session 17, call 5, clean checkout of HEAD: the README's test command (cmake --workflow --preset ci), GPU present.
set -u
O=$OUT/o64; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c64.sh "$O/device_command.sh"
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" > "$O/exp.txt"
timeout 225 cmake --workflow --preset ci > "$O/workflow.log" 2>&1
echo "workflow rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp build/ci/Testing/Temporary/LastTest.log "$O/" 2>/dev/null
cd "$OUT" && tar czf o64.tgz o64 && rm -rf o64
