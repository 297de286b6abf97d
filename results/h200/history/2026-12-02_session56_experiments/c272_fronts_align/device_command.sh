#!/usr/bin/env bash
# Session 56, c272: experiments/decode_read_fronts_align.patch (session 55's fronts with each start rounded down to A
# bytes: S = 1, 24, 33, 48, 1056 at 16; 24, 33, 48, 1056 at 128; 33 at 32 and 4096), its prediction committed first
# (experiments/README.md): is the fronts' cliff their alignment? Patched release build; AttentionKvRead (checking every
# front variant), memcheck and racecheck over it; bench_attention at two decode shapes, bf16, cold, 5 repetitions, two
# processes; Nsight Compute (clean caches) of S = 1, 33, 33 a32 and 33 a128 at GQA b16 KV 32768.
set -u
O=$OUT/o272; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c272.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git apply experiments/decode_read_fronts_align.patch; t "patch rc=$?"; git status --short > "$O/tree_status.txt"
B=build/release
cmake --preset release > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target bench_attention test_gpu >> "$O/build.log" 2>&1; t "build rc=$?"
$B/tests/test_gpu --gtest_filter='AttentionKvRead.*:AttentionKvStream.*' > "$O/test.log" 2>&1; t "test_gpu rc=$?"
SHARDS=1 TIMEOUT=120 scripts/sanitize.sh $B/tests/test_gpu "$O/san" memcheck,racecheck 'AttentionKvRead.*' > "$O/sanitize.txt" 2>&1; t "sanitize rc=$?"
S=b16_hq32_hkv8_d128_q1_kv32768,b256_hq32_hkv32_d128_q1_kv1024
F='^attention/(decode_splitk|ref_kv_read|ref_kv_fronts[0-9a]+)/bf16/decode/.*/cold'
for pass in 1 2; do
  timeout 200 $B/bench/bench_attention --shapes=$S --dtypes=bf16 --benchmark_filter="$F" --benchmark_repetitions=5 \
    --benchmark_display_aggregates_only=true --benchmark_out="$O/bench_pass$pass.json" --benchmark_out_format=json > "$O/bench_pass$pass.log" 2>&1
  t "bench pass $pass rc=$?"
done
timeout 150 ncu --clock-control none --cache-control all --csv --page raw \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size \
  $B/bench/bench_attention --profile --dtypes=bf16 --shapes=b16_hq32_hkv8_d128_q1_kv32768 \
  --benchmark_filter='ref_kv_fronts(1|33|33a32|33a128)/bf16/.*/cold' > "$O/ncu.csv" 2> "$O/ncu.err"; t "ncu rc=$?"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
gzip -9 -n "$O/build.log"; for f in "$O"/san_*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$O/test.log"; tail -4 "$O/sanitize.txt"
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
    r = row.get("ref_kv_read")
    print(f"{shape:34s} p{pas} " + " ".join(f"{k.replace('ref_kv_', '')}={v:.1f}" + (f"({v / r:.4f})" if r else "") for k, v in sorted(row.items())))
PY
python3 - "$O/ncu.csv" <<'PY2'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
if not rows: sys.exit("no ncu rows")
h = rows[0]; ix = {k: i for i, k in enumerate(h)}
f = lambda s: float(s.replace(",", "")) if s else 0
for r in rows[2:]:
    if f(r[ix["dram__bytes_read.sum"]]) > 1e9 and "cub" not in r[ix["Kernel Name"]]:
        print(r[ix["Kernel Name"]][:40], r[ix["launch__grid_size"]], r[ix["gpu__time_duration.sum"]], r[ix["dram__bytes_read.sum"]], r[ix["dram__throughput.avg.pct_of_peak_sustained_elapsed"]])
PY2
grep -hE "ERROR OCCURRED" "$O"/bench_pass*.log | head -3
cd "$OUT" && tar czf o272.tgz o272 && rm -rf o272
