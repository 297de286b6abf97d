#!/usr/bin/env bash
# Session 67, c325: part 3 of the full bf16 run at 035a107: the prefill set and the do_bench cross-check (c323 and c324 were parts 1 and 2); the default 5-call cross-check.
set -u
O=$OUT/o325; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c325.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
ls -l results/h200/logs build/release/bench > "$O/before.txt" 2>&1
SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha) CONTINUE_RUN=1 BENCHES=bench_attention_prefill REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 560 scripts/run_suite.sh > "$O/suite3.log" 2>&1
echo "run_suite part 3 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
mkdir -p "$O/run" && cp results/h200/*.json results/h200/env_*.txt "$O/run/" 2>/dev/null; cp -r results/h200/logs "$O/run/logs"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite3.log"; tail -4 "$O/suite3.log"; grep -E "calls of case bodies" results/h200/logs/bench.log
cd "$OUT" && tar czf o325.tgz o325 && rm -rf o325
