#!/usr/bin/env bash
# Session 50, c243: the README's test command (SOLBENCH_REQUIRE_GPU=1 cmake --workflow --preset ci) on the H200 again, with only
# history/'s folders moved aside (its files and README travel), so that the tests reading history/ run as in CI (c242 moved all of
# history/ aside and failed those two, scripts_unittest and committed_results; every other test passed).
set -u
O=$OUT/o243; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c243.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git status --short > "$O/tree_status.txt" 2>&1
rm -rf build/ci
SOLBENCH_REQUIRE_GPU=1 timeout 560 cmake --workflow --preset ci > "$O/workflow.log" 2>&1
t "workflow rc=$?"
cp build/ci/Testing/Temporary/LastTest.log "$O/" 2>/dev/null; gzip -9 -n "$O/LastTest.log" "$O/workflow.log" 2>/dev/null
cat "$O/exp.txt" "$O/gpu_start.txt"
zcat "$O/workflow.log.gz" | grep -E "tests passed|tests failed|Total Test time"; zcat "$O/workflow.log.gz" | grep -E "\(Failed\)|\(Not Run\)|\(Timeout\)" | head
echo "skipped: $(zcat "$O/workflow.log.gz" | grep -c '(Skipped)')"
zcat "$O/workflow.log.gz" | grep '(Skipped)' | sed -E 's/^ *[0-9]+ - //; s/\.[^.]*$//' | sort | uniq -c | sort -rn | head -8
cd "$OUT" && tar czf o243.tgz o243 && rm -rf o243
