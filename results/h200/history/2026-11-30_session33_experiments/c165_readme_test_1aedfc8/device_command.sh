#!/usr/bin/env bash
# Session 33, c165: the README's test command on the H200 at 1aedfc8ebd2a3e26b35385d12f60b3ff33928cd4 (wgmma_flash's tests included).
set -u
O=$OUT/o165; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c165.sh "$O/device_command.sh"
git status --short > "$O/tree_status.txt" 2>&1
rm -rf build/ci
SOLBENCH_GIT_COMMIT=1aedfc8ebd2a3e26b35385d12f60b3ff33928cd4 timeout 470 cmake --workflow --preset ci > "$O/workflow.log" 2>&1
echo "workflow rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp build/ci/Testing/Temporary/LastTest.log "$O/" 2>/dev/null; gzip -9 -n "$O/LastTest.log" 2>/dev/null
cat "$O/exp.txt"; grep -E "tests passed|tests failed|Total Test time" "$O/workflow.log"; grep -E "\(Failed\)|\(Not Run\)" "$O/workflow.log" | head
echo "skipped: $(grep -c '(Skipped)' "$O/workflow.log")"
cd "$OUT" && tar czf o165.tgz o165 && rm -rf o165
