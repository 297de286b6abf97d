#!/usr/bin/env bash
# Session 53, c256: bench_attention's decode set at HEAD, bf16, 3 repetitions, protocol v378, on c255's machine and build:
# a sixth run of the attention kernels of latest.json, to test session 53's reading of the five (REPORT.md's
# "Across the committed runs"): three shapes below the best SDPA backend in every run, three on either side, 14 above.
set -u
O=$OUT/o256; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c256.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha) BENCHES=bench_attention_decode REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 585 scripts/run_suite.sh > "$O/suite.log" 2>&1
echo "run_suite decode rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
mkdir -p "$O/run" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run/" 2>/dev/null
new=$(ls -t results/h200/2026-*.json | head -1); cp "$new" "$O/"; echo "filed $new" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite.log"; tail -4 "$O/suite.log"; grep -E "calls of case bodies" results/h200/logs/bench.log
