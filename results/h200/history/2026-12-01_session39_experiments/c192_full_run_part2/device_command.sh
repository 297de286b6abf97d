#!/usr/bin/env bash
# Session 39, c192: part 2 of the full bf16 run at 503b488 (bench_attention + cross-check).
set -u
O=$OUT/o192; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c192.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
ls results/h200/logs > "$O/before.txt"
SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha) CONTINUE_RUN=1 BENCHES=bench_attention REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  CROSSCHECK_RUNS=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 570 scripts/run_suite.sh > "$O/suite2.log" 2>&1
echo "run_suite part 2 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
mkdir -p "$O/run" && cp results/h200/*.json results/h200/env_*.txt "$O/run/" 2>/dev/null; cp -r results/h200/logs "$O/run/logs"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite2.log"; tail -5 "$O/suite2.log"
cd "$OUT" && tar czf o192.tgz o192 && rm -rf o192
