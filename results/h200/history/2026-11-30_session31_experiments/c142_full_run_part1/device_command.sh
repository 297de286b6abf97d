#!/usr/bin/env bash
# Session 31, c142: f91c40296eec3422f3bf94df33799cb7d12238fd, part 1 of the full bf16 run (bench_rmsnorm). Its tests
# and sanitizers over the new tests ran in c140 at this commit (the GPU tests of kernels/ are unchanged since c134).
set -u
O=$OUT/o142; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c142.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf results/h200/logs
SOLBENCH_GIT_COMMIT=f91c40296eec3422f3bf94df33799cb7d12238fd BENCHES=bench_rmsnorm REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 560 scripts/run_suite.sh > "$O/suite1.log" 2>&1
t "run_suite part 1 rc=$?"
mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite1.log"; tail -3 "$O/suite1.log"
cd "$OUT" && tar czf o142.tgz o142 && rm -rf o142
