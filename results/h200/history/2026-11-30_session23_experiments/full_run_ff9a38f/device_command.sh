#!/usr/bin/env bash
# Session 23, call 3: the full bf16 run of ff9a38fee67ebf7d20da823a9836172e42e722f2 (tiled_flash.cu's comment moved out as well, SASS identical), from this clean copy of the tree.
set -u
O=$OUT/o94; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c94.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
echo "tree: git says $(git rev-parse HEAD 2>/dev/null || echo no-git) $(git status --porcelain --untracked-files=no 2>/dev/null | wc -l) modified" > "$O/exp.txt"
SOLBENCH_GIT_COMMIT=ff9a38fee67ebf7d20da823a9836172e42e722f2 REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 CROSSCHECK_RUNS=1 \
  SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 578 scripts/run_suite.sh > "$O/suite.log" 2>&1
echo "run_suite rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
mkdir -p "$O/run" && cp results/h200/*.json results/h200/*.txt results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run/" 2>/dev/null
cd "$OUT" && tar czf o94.tgz o94 && rm -rf o94
