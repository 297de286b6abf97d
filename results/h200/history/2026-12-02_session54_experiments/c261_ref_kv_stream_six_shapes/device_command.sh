#!/usr/bin/env bash
# Session 54, c261: ref_kv_stream (bench_attention's new decode reference, decode_splitk's order of reading) on the H200:
# its GPU test and ref_kv_read's, both under compute-sanitizer memcheck and racecheck, then bench_attention at the probe's
# six shapes (decode_splitk, ref_kv_read, ref_kv_stream, SDPA cuDNN; bf16, cold and hot, 5 repetitions, protocol v378).
set -u
O=$OUT/o261; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c261.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
B=build/release
cmake --preset release > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target bench_attention test_gpu >> "$O/build.log" 2>&1; t "build rc=$?"
$B/tests/test_gpu --gtest_filter='AttentionKvStream.*:AttentionKvRead.*' > "$O/test.log" 2>&1; t "tests rc=$?"
SHARDS=2 TIMEOUT=200 scripts/sanitize.sh $B/tests/test_gpu "$O/san" memcheck,racecheck 'AttentionKvStream.*:AttentionKvRead.*' > "$O/sanitize.log" 2>&1; t "sanitize rc=$?"
F='^attention/(decode_splitk|ref_kv_read|ref_kv_stream|torch_sdpa_cudnn)/bf16/decode/(b16_hq32_hkv8_d128_q1_kv32768|b256_hq32_hkv32_d128_q1_kv1024|b64_hq32_hkv32_d128_q1_kv4096|b64_hq32_hkv8_d128_q1_kv16384|b256_hq32_hkv8_d128_q1_kv4096|b16_hq32_hkv32_d128_q1_kv8192)/'
timeout 300 $B/bench/bench_attention --shapes=decode --dtypes=bf16 --benchmark_filter="$F" --benchmark_repetitions=5 \
  --benchmark_display_aggregates_only=true --benchmark_out="$O/bench.json" --benchmark_out_format=json > "$O/bench.log" 2>&1; t "bench rc=$?"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
gzip -9 -n "$O/build.log"; for f in "$O"/san*; do [ -f "$f" ] && gzip -9 -n "$f"; done
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED  \]|SKIPPED" "$O/test.log"; cat "$O/sanitize.log" | tail -8
python3 - "$O/bench.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["benchmarks"]:
    if b.get("aggregate_name") == "median":
        print(f"{b['name']:100s} {b['real_time']:9.1f} us")
PY
tail -2 "$O/bench.log"; cd "$OUT" && tar czf o261.tgz o261 && rm -rf o261
