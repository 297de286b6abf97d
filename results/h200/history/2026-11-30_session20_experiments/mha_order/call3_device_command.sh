#!/usr/bin/env bash
# Session 20, call 3: (1) does the allocation history move MHA b64 KV 4096? decode_splitk and cuDNN cold with
# GQA b64 KV 16384 allocated and freed first (call 1's order) against the MHA shape alone, twice, one machine;
# (2) the rest diagnostic: the prefill anchors, bf16 cold, with the cross-check, SOLBENCH_REST_MS 0 and 100.
set -u
O=$OUT/o75; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c75.sh "$O/device_command.sh"
git rev-parse HEAD > "$O/commit.txt"
nvidia-smi --query-gpu=uuid,serial,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
{ cmake --preset release && cmake --build --preset release --target bench_attention; } > "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
F='^attention/(decode_splitk|torch_sdpa_cudnn)/bf16/decode/.*/cold'
i=0
for s in after_gqa alone after_gqa alone; do
  i=$((i + 1))
  case $s in
    after_gqa) S=b64_hq32_hkv8_d128_q1_kv16384,b64_hq32_hkv32_d128_q1_kv4096 ;;
    alone) S=b64_hq32_hkv32_d128_q1_kv4096 ;;
  esac
  timeout 60 build/release/bench/bench_attention --dtypes=bf16 --shapes=$S --benchmark_filter="$F" \
    --benchmark_repetitions=3 --benchmark_out="$O/alloc_${i}_$s.json" --benchmark_out_format=json > "$O/alloc_${i}_$s.log" 2>&1
  echo "alloc $s ($i) rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
for r in 0 100; do
  left=$(( 580 - ($(date +%s) - start) ))
  [ $left -lt 60 ] && { echo "stopped before rest $r" >> "$O/exp.txt"; break; }
  rm -rf results/h200/logs
  SOLBENCH_REST_MS=$r REPETITIONS=3 ATTENTION_SHAPES=anchors ATTENTION_DTYPES=bf16 \
    BENCH_ARGS='--dtypes=bf16 --benchmark_filter=^attention/.*/prefill/.*/cold' CROSSCHECK_RUNS=1 SKIP_TESTS=1 \
    SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/rest_$r.log" 2>&1
  echo "rest $r rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
  mkdir -p "$O/rest_$r" && cp results/h200/logs/*.json results/h200/logs/*.txt "$O/rest_$r/" 2>/dev/null
done
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cd "$OUT" && tar czf o75.tgz o75 && rm -rf o75
