#!/usr/bin/env bash
# Session 55, c269: experiments/decode_read_fronts_placement.patch (ref_kv_fronts<S>[b]: fronts given interleaved (block % S) or blocked
# (block / (G / S)) blocks; interleaved S = 1, 16, 32, 33, 44, 66, 1056, blocked 66 and 264), its prediction committed first (experiments/README.md
# at 48441c8). Patched release build; AttentionKvRead (checking every S), memcheck and racecheck over it; bench_attention at
# three decode shapes, bf16, cold, 5 repetitions, two processes (decode_splitk, ref_kv_read, ref_kv_fronts*); then Nsight
# Compute (clean caches) of the reads at GQA b16 KV 32768: time and DRAM bytes against S.
set -u
O=$OUT/o269; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c269.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git apply experiments/decode_read_fronts_placement.patch; t "patch rc=$?"; git status --short > "$O/tree_status.txt"
B=build/release
cmake --preset release > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target bench_attention test_gpu >> "$O/build.log" 2>&1; t "build rc=$?"
$B/tests/test_gpu --gtest_filter='AttentionKvRead.*:AttentionKvStream.*' > "$O/test.log" 2>&1; t "test_gpu rc=$?"
SHARDS=1 TIMEOUT=120 scripts/sanitize.sh $B/tests/test_gpu "$O/san" memcheck,racecheck 'AttentionKvRead.*' > "$O/sanitize.txt" 2>&1; t "sanitize rc=$?"
S=b16_hq32_hkv8_d128_q1_kv32768,b256_hq32_hkv32_d128_q1_kv1024,b16_hq32_hkv8_d128_q1_kv8192
F='^attention/(decode_splitk|ref_kv_read|ref_kv_fronts[0-9]+b?)/bf16/decode/.*/cold'
for pass in 1 2; do
  timeout 200 $B/bench/bench_attention --shapes=$S --dtypes=bf16 --benchmark_filter="$F" --benchmark_repetitions=5 \
    --benchmark_display_aggregates_only=true --benchmark_out="$O/bench_pass$pass.json" --benchmark_out_format=json > "$O/bench_pass$pass.log" 2>&1
  t "bench pass $pass rc=$?"
done
for impl in ref_kv_fronts1 ref_kv_fronts66 ref_kv_fronts66b ref_kv_fronts264b; do
  timeout 60 ncu --clock-control none --cache-control all --csv --page raw \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size \
    $B/bench/bench_attention --profile --dtypes=bf16 --shapes=b16_hq32_hkv8_d128_q1_kv32768 \
    --benchmark_filter="^attention/$impl/bf16/.*/cold" > "$O/ncu_$impl.csv" 2> "$O/ncu_$impl.err"; t "ncu $impl rc=$?"
done
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
for impl in ref_kv_fronts1 ref_kv_fronts66 ref_kv_fronts66b ref_kv_fronts264b; do
python3 - "$O/ncu_$impl.csv" "$impl" <<'PY'
import csv, sys, statistics
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
if not rows: sys.exit("no ncu rows")
h = rows[0]; ix = {k: i for i, k in enumerate(h)}
f = lambda s: float(s.replace(",", "")) if s else 0
sel = [r for r in rows[2:] if "fronts" in r[ix["Kernel Name"]]]
if sel:
    print(sys.argv[2], len(sel), "launches: dram bytes med", statistics.median(f(r[ix["dram__bytes_read.sum"]]) for r in sel),
          "dur med us", statistics.median(f(r[ix["gpu__time_duration.sum"]]) for r in sel) / 1e3,
          "dram% med", statistics.median(f(r[ix["dram__throughput.avg.pct_of_peak_sustained_elapsed"]]) for r in sel))
PY
done
grep -hE "ERROR OCCURRED" "$O"/bench_pass*.log | head -3
cd "$OUT" && tar czf o269.tgz o269 && rm -rf o269
