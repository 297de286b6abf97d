#!/usr/bin/env bash
# Session 51, c250: scripts/sanitize.sh at 518aba0, where racecheck's leaving out RepeatedRunsAreBitIdentical moved
# from gpu_run.sh into it, on the H200: memcheck and racecheck over the RMSNorm and WgmmaFlash GPU tests, 7 shards a tool.
set -u
O=$OUT/o250; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c250.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cat .devcall/s/sha > "$O/sha.txt" 2>/dev/null
cmake --preset release -DSOLBENCH_WITH_TORCH=OFF > "$O/configure.log" 2>&1; t "configure rc=$?"
cmake --build --preset release --target test_gpu > "$O/build.log" 2>&1; t "build rc=$?"
SHARDS=7 TIMEOUT=200 scripts/sanitize.sh build/release/tests/test_gpu "$O/san" memcheck,racecheck '*RmsNorm*:WgmmaFlash.*' > "$O/sanitize.txt" 2>&1
t "sanitize.sh rc=$?"
grep -h "Google Test filter" "$O"/san_memcheck_0.log "$O"/san_racecheck_0.log >> "$O/exp.txt"
cat "$O/exp.txt" "$O/sanitize.txt"
for f in "$O"/*.log; do [ $(stat -c %s "$f") -gt 8192 ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o250.tgz o250 && rm -rf o250
