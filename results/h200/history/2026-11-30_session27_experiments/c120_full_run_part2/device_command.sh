#!/usr/bin/env bash
# Session 27, c120: part 2 of the full bf16 run of 7f16350e3d4871d6701d8fb31ab4ec63e60e6cae: bench_attention (BENCHES=bench_attention), the
# cross-check over both parts' JSON and the merge (part 1's bench_rmsnorm.json, from c119, is carried in
# results/h200/logs; the merge refuses it if this is another GPU).
set -u
O=$OUT/o120; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c120.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
ls -la results/h200/logs build/release/bench/bench_attention > "$O/before.txt" 2>&1
SOLBENCH_GIT_COMMIT=7f16350e3d4871d6701d8fb31ab4ec63e60e6cae CONTINUE_RUN=1 BENCHES=bench_attention REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 CROSSCHECK_RUNS=1 \
  SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 585 scripts/run_suite.sh > "$O/suite2.log" 2>&1
t "run_suite part 2 rc=$?"
mkdir -p "$O/run" && cp results/h200/*.json results/h200/*.txt results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run/" 2>/dev/null
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite2.log"; tail -5 "$O/suite2.log"
cd "$OUT" && tar czf o120.tgz o120 && rm -rf o120
