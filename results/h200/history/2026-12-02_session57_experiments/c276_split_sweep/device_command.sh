#!/usr/bin/env bash
# Session 57, c276: no patch. decode_splitk's split-count sweep (--split-sweep=all, s1-s128) at GQA b16 KV 32768,
# MHA b256 KV 1024 and MHA b64 KV 4096, beside decode_splitk, ref_kv_read and SDPA cuDNN; bf16, cold,
# 5 repetitions, two processes. Prediction committed first (experiments/README.md at f3b7fce).
set -u
O=$OUT/o276; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c276.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git status --short > "$O/tree_status.txt"
B=build/release
cmake --preset release > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target bench_attention >> "$O/build.log" 2>&1; t "build rc=$?"
S=b16_hq32_hkv8_d128_q1_kv32768,b256_hq32_hkv32_d128_q1_kv1024,b64_hq32_hkv32_d128_q1_kv4096
F='^attention/(decode_splitk(_s[0-9]+)?|ref_kv_read|torch_sdpa_cudnn)/bf16/decode/.*/cold'
for pass in 1 2; do
  timeout 250 $B/bench/bench_attention --shapes=$S --dtypes=bf16 --split-sweep=all --benchmark_filter="$F" --benchmark_repetitions=5 \
    --benchmark_display_aggregates_only=true --benchmark_out="$O/bench_pass$pass.json" --benchmark_out_format=json > "$O/bench_pass$pass.log" 2>&1
  t "bench pass $pass rc=$?"
done
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
gzip -9 -n "$O/build.log"
cat "$O/exp.txt" "$O/gpu_start.txt"
python3 - "$O" <<'PY'
import json, sys, collections
t = collections.defaultdict(dict)
for pas in (1, 2):
    try: d = json.load(open(f"{sys.argv[1]}/bench_pass{pas}.json"))
    except Exception as e: print("pass", pas, e); continue
    for b in d["benchmarks"]:
        if b.get("aggregate_name") == "median":
            parts = b["name"].split("/"); t[(parts[4], pas)][parts[1]] = b["real_time"]
for (shape, pas), row in sorted(t.items()):
    r = row.get("decode_splitk")
    print(f"{shape:34s} p{pas} " + " ".join(f"{k.replace('decode_splitk', 'ds').replace('torch_sdpa_', '')}={v:.1f}" + (f"({v / r:.4f})" if r else "") for k, v in sorted(row.items())))
PY
grep -hE "ERROR OCCURRED|error" "$O"/bench_pass*.log | head -5
for f in "$O"/bench_pass*; do gzip -9 -n "$f"; done
cd "$OUT" && tar czf o276.tgz o276 && rm -rf o276
