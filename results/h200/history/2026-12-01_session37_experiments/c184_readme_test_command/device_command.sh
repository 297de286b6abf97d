#!/usr/bin/env bash
# Session 37, c184: the README test command on the H200 at the commit that adopted da29b41's run.
set -u
O=$OUT/o184; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c184.sh "$O/device_command.sh"
git status --short > "$O/tree_status.txt" 2>&1
rm -rf build/ci
SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha) timeout 400 cmake --workflow --preset ci > "$O/workflow.log" 2>&1
echo "workflow rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp build/ci/Testing/Temporary/LastTest.log "$O/" 2>/dev/null; gzip -9 -n "$O/LastTest.log" 2>/dev/null
cat "$O/exp.txt"; grep -E "tests passed|tests failed|Total Test time" "$O/workflow.log"; grep -E "\(Failed\)|\(Not Run\)" "$O/workflow.log" | head
echo "skipped: $(grep -c '(Skipped)' "$O/workflow.log")"
cd "$OUT" && tar czf o184.tgz o184 && rm -rf o184
