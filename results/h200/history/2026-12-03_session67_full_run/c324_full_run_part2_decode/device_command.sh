#!/usr/bin/env bash
# Session 67, c324: part 2 of the full bf16 run at 035a107 (c323 was part 1): bench_attention decode set, one shape at a time.
set -u
O=$OUT/o324; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c324.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
ls -l results/h200/logs build/release/bench > "$O/before.txt" 2>&1
SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha) CONTINUE_RUN=1 BENCHES=bench_attention_decode REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 588 scripts/run_suite.sh > "$O/suite2.log" 2>&1
echo "run_suite part 2 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
mkdir -p "$O/run2" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run2/" 2>/dev/null
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite2.log"; tail -4 "$O/suite2.log"; grep -E "calls of case bodies" results/h200/logs/bench.log
cd "$OUT" && tar czf o324.tgz o324 && rm -rf o324
