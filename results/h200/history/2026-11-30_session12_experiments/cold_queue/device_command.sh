#!/usr/bin/env bash
# Session 12, call 2: the cold queue, batched (v6) against continuous (v8), on the cross-check's PyTorch
# baselines and on vectorized / decode_splitk, bf16 cold, two passes in ABBA order; then the cross-check
# (do_bench, 3 calls a case) against the first continuous pass.
set -u
O=$OUT/o39; mkdir -p "$O"
start=$(date +%s)
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c39.sh "$O/device_command.sh"
git log --oneline -1 > "$O/exp.txt"; git status --short >> "$O/exp.txt"
nvidia-smi --query-gpu=temperature.gpu,power.draw,clocks.sm --format=csv,noheader >> "$O/exp.txt"
filter='--dtypes=bf16 --benchmark_filter=/(torch_(rms_norm|sdpa|manual)|vectorized|decode_splitk)/bf16/.+/cold'
i=0
for q in batched continuous continuous batched; do
  i=$((i+1))
  SOLBENCH_COLD_QUEUE=$q REPETITIONS=3 ATTENTION_SHAPES=anchors ATTENTION_DTYPES=bf16 BENCH_ARGS="$filter" \
    SKIP_TESTS=1 SKIP_SANITIZER=1 SKIP_CROSSCHECK=1 timeout 200 scripts/gpu_run.sh "$O/p${i}_$q" > "$O/p${i}_$q.log" 2>&1
  log "pass $i $q rc=$?"
  nvidia-smi --query-gpu=temperature.gpu,power.draw,clocks.sm --format=csv,noheader >> "$O/exp.txt"
done
el=$(( $(date +%s) - start ))
timeout $(( 540 - el )) python3 scripts/crosscheck_torch.py "$O"/p2_continuous/bench_*.json -o "$O/crosscheck_p2.json" --runs 3 \
  --anchors results/h200/anchors.json > "$O/crosscheck_p2.log" 2>&1
log "crosscheck rc=$?"
cd "$OUT" && tar czf o39.tgz o39 && rm -rf o39
