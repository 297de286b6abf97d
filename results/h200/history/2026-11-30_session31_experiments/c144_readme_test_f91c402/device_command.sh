#!/usr/bin/env bash
# Session 31, c144: the README's test command on the H200 at f91c40296eec3422f3bf94df33799cb7d12238fd (ref_kv_read's tests included).
set -u
O=$OUT/o144; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c144.sh "$O/device_command.sh"
git status --short > "$O/tree_status.txt" 2>&1
rm -rf build/ci
SOLBENCH_GIT_COMMIT=f91c40296eec3422f3bf94df33799cb7d12238fd timeout 560 cmake --workflow --preset ci > "$O/workflow.log" 2>&1
echo "workflow rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp build/ci/Testing/Temporary/LastTest.log "$O/" 2>/dev/null; gzip -9 -n "$O/LastTest.log" 2>/dev/null
cat "$O/exp.txt"; grep -E "tests passed|tests failed|Total Test time" "$O/workflow.log"; grep -E "\(Failed\)|\(Not Run\)" "$O/workflow.log" | head
echo "skipped: $(grep -c '(Skipped)' "$O/workflow.log")"
cd "$OUT" && tar czf o144.tgz o144 && rm -rf o144
