#!/usr/bin/env bash
# Session 56, c271: decode at KV lengths that are not a power of two (experiments/README.md, the prediction committed
# at 89efdc6 before this run). Unpatched release build (libtorch, for SDPA); AttentionKvRead and AttentionKvStream,
# memcheck and racecheck over both; bench_attention at four families of decode shapes, bf16, cold, 3 repetitions, two
# processes (decode_splitk, ref_kv_read, ref_kv_stream, SDPA cuDNN and flash).
set -u
O=$OUT/o271; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c271.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git status --short > "$O/tree_status.txt"
B=build/release
cmake --preset release > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target bench_attention test_gpu >> "$O/build.log" 2>&1; t "build rc=$?"
$B/tests/test_gpu --gtest_filter='AttentionKvRead.*:AttentionKvStream.*' > "$O/test.log" 2>&1; t "test_gpu rc=$?"
SHARDS=1 TIMEOUT=120 scripts/sanitize.sh $B/tests/test_gpu "$O/san" memcheck,racecheck 'AttentionKvRead.*:AttentionKvStream.*' > "$O/sanitize.txt" 2>&1; t "sanitize rc=$?"
S=b16_hq32_hkv8_d128_q1_kv32768,b16_hq32_hkv8_d128_q1_kv32000,b16_hq32_hkv8_d128_q1_kv33000,b16_hq32_hkv8_d128_q1_kv40960
S=$S,b256_hq32_hkv32_d128_q1_kv1024,b256_hq32_hkv32_d128_q1_kv1000,b256_hq32_hkv32_d128_q1_kv1056,b256_hq32_hkv32_d128_q1_kv1536
S=$S,b256_hq32_hkv8_d128_q1_kv4096,b256_hq32_hkv8_d128_q1_kv4000,b64_hq32_hkv32_d128_q1_kv4096,b64_hq32_hkv32_d128_q1_kv4000
F='^attention/(decode_splitk|ref_kv_read|ref_kv_stream|torch_sdpa_cudnn|torch_sdpa_flash)/bf16/decode/.*/cold'
for pass in 1 2; do
  timeout 250 $B/bench/bench_attention --shapes=$S --dtypes=bf16 --benchmark_filter="$F" --benchmark_repetitions=3 \
    --benchmark_display_aggregates_only=true --benchmark_out="$O/bench_pass$pass.json" --benchmark_out_format=json > "$O/bench_pass$pass.log" 2>&1
  t "bench pass $pass rc=$?"
done
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
gzip -9 -n "$O/build.log"; for f in "$O"/san_*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$O/test.log"; tail -4 "$O/sanitize.txt"
python3 - "$O" <<'PY'
import json, sys, collections, re
t = collections.defaultdict(dict)
for pas in (1, 2):
    try: d = json.load(open(f"{sys.argv[1]}/bench_pass{pas}.json"))
    except Exception as e: print("pass", pas, e); continue
    for b in d["benchmarks"]:
        if b.get("aggregate_name") == "median":
            parts = b["name"].split("/"); t[(parts[4], pas)][parts[1]] = b["real_time"]
for (shape, pas), row in sorted(t.items()):
    m = {k: int(v) for k, v in re.findall(r"(b|hkv|d|kv)(\d+)", shape)}
    gb = m["b"] * m["kv"] * m["hkv"] * m["d"] * 4 / 1e3  # K + V bytes / 1e3 -> GB/s from us
    print(f"{shape:34s} p{pas} " + " ".join(f"{k.replace('torch_sdpa_', '').replace('ref_kv_', '')}={gb / v:.0f}" for k, v in sorted(row.items())))
PY
grep -hE "ERROR OCCURRED" "$O"/bench_pass*.log | head -3
cd "$OUT" && tar czf o271.tgz o271 && rm -rf o271
