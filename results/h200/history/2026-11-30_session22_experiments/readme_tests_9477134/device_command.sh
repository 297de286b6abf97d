#!/usr/bin/env bash
# Session 22, call 3: the README test command (cmake --workflow --preset ci) on the H200, in the device's copy of
# the clean tree of 9477134 (3c259c3's kernels), build/ci removed first.
set -u
O=$OUT/o89; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c89.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf build/ci
echo "tree of 9477134 (SOLBENCH_GIT_COMMIT)" > "$O/exp.txt"
SOLBENCH_GIT_COMMIT=9477134 timeout 450 cmake --workflow --preset ci > "$O/workflow.log" 2>&1
echo "workflow rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp build/ci/Testing/Temporary/LastTest.log "$O/" 2>/dev/null
gzip -9 -n "$O/workflow.log" "$O/LastTest.log"
cd "$OUT" && tar czf o89.tgz o89 && rm -rf o89
