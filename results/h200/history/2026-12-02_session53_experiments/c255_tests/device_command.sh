#!/usr/bin/env bash
# Session 53, c255: the Release build with libtorch at HEAD (kernels unchanged since 9219b4f's run) and every test
# run_suite.sh runs (test_cpu, test_harness_cpu, the CLI test, test_gpu, LayerTorch, the harness self-test); no bench.
# c256 then runs bench_attention's decode set on the same machine, reusing this build.
set -u
O=$OUT/o255; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c255.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha) SKIP_BENCH=1 SKIP_CROSSCHECK=1 SKIP_SANITIZER=1 timeout 580 scripts/run_suite.sh > "$O/suite.log" 2>&1
echo "run_suite tests rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp results/h200/logs/*.log results/h200/logs/*.txt "$O/" 2>/dev/null
for f in "$O"/test*.log; do [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 100000 ] && gzip -9 -n "$f"; done
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite.log"; tail -5 "$O/suite.log"
grep -hE "PASSED|FAILED|tests ran" results/h200/logs/test.log | tail -12
