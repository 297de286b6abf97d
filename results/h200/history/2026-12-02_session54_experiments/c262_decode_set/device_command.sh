#!/usr/bin/env bash
# Session 54, c262: ref_kv_stream at the tensor-core blocks' 96 KB: its GPU test and ref_kv_read's under memcheck and
# racecheck, then bench_attention's decode set (bf16, 3 repetitions, protocol v378) through run_suite.sh, as c256 ran it:
# decode_splitk (latest.json's attention kernels), SDPA, ref_kv_read and ref_kv_stream in one run.
set -u
O=$OUT/o262; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c262.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
B=build/release
cmake --preset release > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target test_gpu >> "$O/build.log" 2>&1; t "build rc=$?"
$B/tests/test_gpu --gtest_filter='AttentionKvStream.*:AttentionKvRead.*' > "$O/test.log" 2>&1; t "tests rc=$?"
SHARDS=2 TIMEOUT=120 scripts/sanitize.sh $B/tests/test_gpu "$O/sanitizer" memcheck,racecheck 'AttentionKvStream.*:AttentionKvRead.*' > "$O/sanitize_summary.log" 2>&1; t "sanitize rc=$?"
SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha) BENCHES=bench_attention_decode REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 470 scripts/run_suite.sh > "$O/suite.log" 2>&1; t "run_suite decode rc=$?"
mkdir -p "$O/run" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run/" 2>/dev/null
new=$(ls -t results/h200/2026-*.json | head -1); cp "$new" "$O/"; echo "filed $new" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
gzip -9 -n "$O/build.log"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$O/test.log"; tail -6 "$O/sanitize_summary.log"
grep "^== " "$O/suite.log"; tail -4 "$O/suite.log"; grep -E "calls of case bodies" results/h200/logs/bench.log
cd "$OUT" && tar czf o262.tgz o262 && rm -rf o262
