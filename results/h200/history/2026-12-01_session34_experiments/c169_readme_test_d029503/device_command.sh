#!/usr/bin/env bash
# Session 34, c169: the README's test command on the H200 at d029503b6adeda2acc0c333c1bd0b87ed8b849b5 (wgmma_flash with the overlap and three warpgroups at D 64).
set -u
O=$OUT/o169; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c169.sh "$O/device_command.sh"
git status --short > "$O/tree_status.txt" 2>&1
rm -rf build/ci
SOLBENCH_GIT_COMMIT=d029503b6adeda2acc0c333c1bd0b87ed8b849b5 timeout 470 cmake --workflow --preset ci > "$O/workflow.log" 2>&1
echo "workflow rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp build/ci/Testing/Temporary/LastTest.log "$O/" 2>/dev/null; gzip -9 -n "$O/LastTest.log" 2>/dev/null
cat "$O/exp.txt"; grep -E "tests passed|tests failed|Total Test time" "$O/workflow.log"; grep -E "\(Failed\)|\(Not Run\)" "$O/workflow.log" | head
echo "skipped: $(grep -c '(Skipped)' "$O/workflow.log")"
cd "$OUT" && tar czf o169.tgz o169 && rm -rf o169
