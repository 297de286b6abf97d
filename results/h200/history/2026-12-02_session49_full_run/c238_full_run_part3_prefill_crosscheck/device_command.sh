#!/usr/bin/env bash
# Session 49, c238: part 3 of the full bf16 run at 9219b4f, protocol v378: the prefill set (one shape's inputs at a time, the default) and the cross-check (c236, c237 were
# parts 1 and 2).
set -u
O=$OUT/o238; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c238.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
ls -l results/h200/logs build/release/bench > "$O/before.txt" 2>&1
SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha) CONTINUE_RUN=1 BENCHES=bench_attention_prefill REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  CROSSCHECK_RUNS=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 588 scripts/run_suite.sh > "$O/suite3.log" 2>&1
echo "run_suite part 3 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
mkdir -p "$O/run" && cp results/h200/*.json results/h200/env_*.txt "$O/run/" 2>/dev/null; cp -r results/h200/logs "$O/run/logs"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite3.log"; tail -4 "$O/suite3.log"; grep -E "calls of case bodies" results/h200/logs/bench.log
cd "$OUT" && tar czf o238.tgz o238 && rm -rf o238
