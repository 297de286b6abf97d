#!/usr/bin/env bash
# Session 23, call 1: the full bf16 run of 576287bacd77e08fee354b71a5ad615217e0aa45 (kernel comments moved out, SASS identical to 3c259c3), from this clean copy of the tree.
set -u
O=$OUT/o92; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c92.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
echo "tree: git says $(git rev-parse HEAD 2>/dev/null || echo no-git) $(git status --porcelain --untracked-files=no 2>/dev/null | wc -l) modified" > "$O/exp.txt"
SOLBENCH_GIT_COMMIT=576287bacd77e08fee354b71a5ad615217e0aa45 REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 CROSSCHECK_RUNS=1 \
  SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 578 scripts/run_suite.sh > "$O/suite.log" 2>&1
echo "run_suite rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
mkdir -p "$O/run" && cp results/h200/*.json results/h200/*.txt results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run/" 2>/dev/null
cd "$OUT" && tar czf o92.tgz o92 && rm -rf o92
