#!/usr/bin/env bash
# Session 20, call 4: the rest diagnostic (experiments/README.md): the prefill anchors, bf16 cold, every
# implementation, with the cross-check of their PyTorch rows; SOLBENCH_REST_MS 0, then 100.
set -u
O=$OUT/o76; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c76.sh "$O/device_command.sh"
git rev-parse HEAD > "$O/commit.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
for r in 0 100; do
  left=$(( 585 - ($(date +%s) - start) ))
  [ $left -lt 60 ] && { echo "stopped before rest $r" >> "$O/exp.txt"; break; }
  rm -rf results/h200/logs
  SOLBENCH_REST_MS=$r REPETITIONS=3 ATTENTION_SHAPES=anchors ATTENTION_DTYPES=bf16 \
    BENCH_ARGS='--dtypes=bf16 --benchmark_filter=^attention/.*/prefill/.*/cold' CROSSCHECK_RUNS=1 SKIP_TESTS=1 \
    SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/rest_$r.log" 2>&1
  echo "rest $r rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
  mkdir -p "$O/rest_$r" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/rest_$r/" 2>/dev/null
done
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cd "$OUT" && tar czf o76.tgz o76 && rm -rf o76
