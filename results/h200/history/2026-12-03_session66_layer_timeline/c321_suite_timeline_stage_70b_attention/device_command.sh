#!/usr/bin/env bash
# Session 66, c321: the suite's new layer-timeline stage end to end (run_suite.sh: build with libtorch, bench_e2e's
# decode set bf16+fp16, the timeline over its 8 bf16 decode layers, the report), with bench_attention on the two
# Llama-3-70B decode shapes (bf16) in the same run. Predictions: the 70B b1 KV 32768 window ours 1.02-1.03x cuDNN's
# (c318-c320: 40.8-41.2 vs 41.9-42.4 us); the layer ratio on either side of 1 by up to ~4% (the FFN GEMMs).
set -u
O=$OUT/o321; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c321.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
BENCHES="bench_attention bench_e2e" ATTENTION_SHAPES=b1_hq64_hkv8_d128_q1_kv32768,b64_hq64_hkv8_d128_q1_kv4096 ATTENTION_DTYPES=bf16 \
  E2E_SHAPES=decode SKIP_TESTS=1 SKIP_CROSSCHECK=1 SKIP_SANITIZER=1 timeout 480 scripts/run_suite.sh > "$O/run_suite.log" 2>&1; t "run_suite rc=$?"
mkdir -p "$O/run"; cp results/h200/REPORT.md "$O/run/" 2>/dev/null
cp results/h200/logs/*.json results/h200/logs/env.txt results/h200/logs/bench.log results/h200/logs/test.log "$O/run/" 2>/dev/null
cp "results/h200/$(date -u +%Y-%m-%d)_$(cut -c1-12 .devcall/s/sha).json" "$O/run/" 2>/dev/null
cat "$O/exp.txt"; tail -40 "$O/run_suite.log"
cd "$OUT" && tar czf o321.tgz o321 && rm -rf o321
