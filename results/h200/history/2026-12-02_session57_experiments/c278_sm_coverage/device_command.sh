#!/usr/bin/env bash
# Session 57, c278: no patch. decode_splitk unsplit at GQA 16/4 heads, d128, KV 32768, batch 31, 32, 33 (124, 128, 132
# one-block-an-SM units), beside ref_kv_read and SDPA cuDNN; bf16, cold, 5 repetitions, two processes. Prediction
# committed first (experiments/README.md, the commit in sha.txt).
set -u
O=$OUT/o278; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c278.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git status --short > "$O/tree_status.txt"
B=build/release
cmake --preset release > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target bench_attention >> "$O/build.log" 2>&1; t "build rc=$?"
S=b31_hq16_hkv4_d128_q1_kv32768,b32_hq16_hkv4_d128_q1_kv32768,b33_hq16_hkv4_d128_q1_kv32768
F='^attention/(decode_splitk|ref_kv_read|torch_sdpa_cudnn)/bf16/decode/.*/cold'
for pass in 1 2; do
  timeout 250 $B/bench/bench_attention --shapes=$S --dtypes=bf16 --benchmark_filter="$F" --benchmark_repetitions=5 \
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
            parts = b["name"].split("/"); t[(parts[4], pas)][parts[1]] = b["real_time"]; t[(parts[4], pas)][parts[1] + "_GBs"] = b.get("GB/s", 0)
for (shape, pas), row in sorted(t.items()):
    r = row.get("decode_splitk")
    print(f"{shape:34s} p{pas} " + " ".join(f"{k.replace('decode_splitk', 'ds').replace('torch_sdpa_', '')}={v:.1f}" + (f"({v / r:.4f})" if r else "") for k, v in sorted(row.items())))
PY
grep -hE "ERROR OCCURRED|error" "$O"/bench_pass*.log | head -5
for f in "$O"/bench_pass*; do gzip -9 -n "$f"; done
cd "$OUT" && tar czf o278.tgz o278 && rm -rf o278
