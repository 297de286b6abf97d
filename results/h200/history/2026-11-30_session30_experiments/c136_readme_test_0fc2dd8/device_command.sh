#!/usr/bin/env bash
# Session 30, c136: the README's test command (cmake --workflow --preset ci) on the H200 at 0fc2dd8698e7d11f3d7cbd9c63f9081fbcd910e7.
set -u
O=$OUT/o136; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c136.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf build/ci
SOLBENCH_GIT_COMMIT=0fc2dd8698e7d11f3d7cbd9c63f9081fbcd910e7 timeout 570 cmake --workflow --preset ci > "$O/readme_test.log" 2>&1
echo "workflow rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp build/ci/Testing/Temporary/LastTest.log "$O/" 2>/dev/null
grep -E "tests passed|Total Test time|Failed|\*\*\*" "$O/readme_test.log" | tail -15 >> "$O/exp.txt"
grep -c "Skipped" "$O/readme_test.log" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"
gzip -9 -n "$O/readme_test.log" "$O/LastTest.log" 2>/dev/null
cd "$OUT" && tar czf o136.tgz o136 && rm -rf o136
