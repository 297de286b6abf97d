#!/usr/bin/env bash
# Session 28, c128: part 2 of 30b06c4's full bf16 run (bench_attention, cross-check), continuing c127's part 1.
set -u
O=$OUT/o128; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c128.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
ls results/h200/logs > "$O/before.txt"
SOLBENCH_GIT_COMMIT=30b06c4f842188d8967d18ecc01626985dc78df8 CONTINUE_RUN=1 BENCHES=bench_attention REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  CROSSCHECK_RUNS=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 580 scripts/run_suite.sh > "$O/suite2.log" 2>&1
echo "run_suite part 2 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
mkdir -p "$O/run" && cp -r results/h200/logs "$O/run/" && cp results/h200/*.json results/h200/REPORT.md "$O/run/" 2>/dev/null
gzip "$O/suite2.log"
cat "$O/exp.txt" "$O/gpu_start.txt"; zcat "$O/suite2.log.gz" | grep "^== "; zcat "$O/suite2.log.gz" | tail -4
cd "$OUT" && tar czf o128.tgz o128 && rm -rf o128
