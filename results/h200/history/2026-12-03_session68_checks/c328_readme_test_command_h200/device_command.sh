#!/usr/bin/env bash
# Session 68, c328: the README's test command (SOLBENCH_REQUIRE_GPU=1 cmake --workflow --preset ci) on the H200 at 93c837c,
# its first run there since c313 (session 64, 6a1d12d); since then: the layer timeline and its tests, energy_probe, acceptance.py's copy figures.
set -u
O=$OUT/o328; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c328.sh "$O/device_command.sh"
cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git status --short > "$O/tree_status.txt" 2>&1
{ command -v python3; python3 -c "import lzma, sys; print(sys.version, lzma.__file__)"; } > "$O/python_lzma.txt" 2>&1
rm -rf build/ci
SOLBENCH_REQUIRE_GPU=1 timeout 570 cmake --workflow --preset ci > "$O/workflow.log" 2>&1
t "workflow rc=$?"
cp build/ci/Testing/Temporary/LastTest.log "$O/" 2>/dev/null; gzip -9 -n "$O/LastTest.log" "$O/workflow.log" 2>/dev/null
cat "$O/exp.txt" "$O/gpu_start.txt" "$O/python_lzma.txt"
zcat "$O/workflow.log.gz" | grep -E "tests passed|tests failed|Total Test time"; zcat "$O/workflow.log.gz" | grep -E "\(Failed\)|\(Not Run\)|\(Timeout\)" | head
echo "skipped: $(zcat "$O/workflow.log.gz" | grep -c '(Skipped)')"
zcat "$O/workflow.log.gz" | grep '(Skipped)' | sed -E 's/^ *[0-9]+ - //; s/\.[^.]*$//' | sort | uniq -c | sort -rn | head -8
cd "$OUT" && tar czf o328.tgz o328 && rm -rf o328
