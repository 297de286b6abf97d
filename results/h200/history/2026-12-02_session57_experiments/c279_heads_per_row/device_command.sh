#!/usr/bin/env bash
# Session 57, c279: no patch. decode_splitk unsplit at 128 units (GQA group 4, d128, KV 32768) with 2, 4, 8 and 16 kv heads
# (8/2 b64, 16/4 b32, 32/8 b16, 64/16 b8), beside ref_kv_read and SDPA cuDNN; bf16, cold, 3 repetitions (the session's last device seconds), two processes. Prediction
# committed first (experiments/README.md, the commit in sha.txt).
set -u
O=$OUT/o279; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c279.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
B=build/release
cmake --preset release > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target bench_attention >> "$O/build.log" 2>&1; t "build rc=$?"
S=b64_hq8_hkv2_d128_q1_kv32768,b32_hq16_hkv4_d128_q1_kv32768,b16_hq32_hkv8_d128_q1_kv32768,b8_hq64_hkv16_d128_q1_kv32768
F='^attention/(decode_splitk|ref_kv_read|torch_sdpa_cudnn)/bf16/decode/.*/cold'
for pass in 1 2; do
  timeout 100 $B/bench/bench_attention --shapes=$S --dtypes=bf16 --benchmark_filter="$F" --benchmark_repetitions=3 \
    --benchmark_display_aggregates_only=true --benchmark_out="$O/bench_pass$pass.json" --benchmark_out_format=json > "$O/bench_pass$pass.log" 2>&1
  t "bench pass $pass rc=$?"
done
gzip -9 -n "$O/build.log"
cat "$O/exp.txt"; nvidia-smi --query-gpu=uuid --format=csv,noheader
python3 - "$O" <<'PY'
import json, sys, collections
t = collections.defaultdict(dict)
for pas in (1, 2):
    try: d = json.load(open(f"{sys.argv[1]}/bench_pass{pas}.json"))
    except Exception as e: print("pass", pas, e); continue
    for b in d["benchmarks"]:
        if b.get("aggregate_name") == "median":
            parts = b["name"].split("/"); t[(parts[4], pas)][parts[1]] = b["real_time"]; t[(parts[4], pas)][parts[1] + "_GBs"] = b.get("GB/s", 0)
for (shape, pas), row in sorted(t.items()):
    r = row.get("decode_splitk")
    print(f"{shape:34s} p{pas} " + " ".join(f"{k.replace('decode_splitk', 'ds').replace('torch_sdpa_', '')}={v:.1f}" + (f"({v / r:.4f})" if r else "") for k, v in sorted(row.items())))
PY
grep -hE "ERROR OCCURRED|error" "$O"/bench_pass*.log | head -5
for f in "$O"/bench_pass*; do gzip -9 -n "$f"; done
cd "$OUT" && tar czf o279.tgz o279 && rm -rf o279
