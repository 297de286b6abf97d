#!/usr/bin/env bash
# Session 55, c267: experiments/decode_read_segments.patch (ref_kv_segments: ref_kv_read's kernel, one contiguous
# segment a block instead of one grid-wide sweep), its prediction committed first (experiments/README.md at e42b85a).
# Patched release build (libtorch, for SDPA cuDNN); AttentionKvRead (now also checking ref_kv_segments), memcheck and
# racecheck over it; bench_attention at six decode shapes, bf16, cold, 5 repetitions, two processes (decode_splitk,
# ref_kv_read, ref_kv_segments, ref_kv_stream, SDPA cuDNN); then Nsight Compute (clean caches) of ref_kv_read and
# ref_kv_segments at GQA b16 KV 32768 and MHA b256 KV 1024.
set -u
O=$OUT/o267; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c267.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git apply experiments/decode_read_segments.patch; t "patch rc=$?"; git status --short > "$O/tree_status.txt"
B=build/release
cmake --preset release > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target bench_attention test_gpu >> "$O/build.log" 2>&1; t "build rc=$?"
$B/tests/test_gpu --gtest_filter='AttentionKvRead.*:AttentionKvStream.*' > "$O/test.log" 2>&1; t "test_gpu rc=$?"
SHARDS=1 TIMEOUT=120 scripts/sanitize.sh $B/tests/test_gpu "$O/san" memcheck,racecheck 'AttentionKvRead.*' > "$O/sanitize.txt" 2>&1; t "sanitize rc=$?"
S=b16_hq32_hkv8_d128_q1_kv32768,b64_hq32_hkv32_d128_q1_kv4096,b256_hq32_hkv32_d128_q1_kv1024,b256_hq32_hkv8_d128_q1_kv4096,b16_hq32_hkv8_d128_q1_kv8192,b1_hq32_hkv8_d128_q1_kv4096
F='^attention/(decode_splitk|ref_kv_read|ref_kv_segments|ref_kv_stream|torch_sdpa_cudnn)/bf16/decode/.*/cold'
for pass in 1 2; do
  timeout 200 $B/bench/bench_attention --shapes=$S --dtypes=bf16 --benchmark_filter="$F" --benchmark_repetitions=5 \
    --benchmark_display_aggregates_only=true --benchmark_out="$O/bench_pass$pass.json" --benchmark_out_format=json > "$O/bench_pass$pass.log" 2>&1
  t "bench pass $pass rc=$?"
done
timeout 150 ncu --clock-control none --cache-control all --csv --page raw \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,sm__cycles_elapsed.avg.per_second \
  $B/bench/bench_attention --profile --dtypes=bf16 --shapes=b16_hq32_hkv8_d128_q1_kv32768,b256_hq32_hkv32_d128_q1_kv1024 \
  --benchmark_filter='(ref_kv_read|ref_kv_segments)/bf16/.*/cold' > "$O/ncu.csv" 2> "$O/ncu.err"; t "ncu rc=$?"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
gzip -9 -n "$O/build.log"; for f in "$O"/san_*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$O/test.log"; cat "$O/sanitize.txt" | tail -4
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
    r, s = row.get("ref_kv_read"), row.get("ref_kv_segments")
    print(f"{shape:34s} p{pas} " + " ".join(f"{k}={v:.1f}" for k, v in sorted(row.items())) + (f"  seg/read={s/r:.4f}" if r and s else ""))
PY
python3 - "$O/ncu.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
if not rows: sys.exit("no ncu rows")
h = rows[0]; ix = {k: i for i, k in enumerate(h)}
f = lambda s: float(s.replace(",", "")) if s else 0
for r in rows[2:]:
    if f(r[ix["dram__bytes_read.sum"]]) > 1e9 and "cub" not in r[ix["Kernel Name"]]:
        print(r[ix["Kernel Name"]][:40], r[ix["launch__grid_size"]], r[ix["dram__bytes_read.sum"]], r[ix["gpu__time_duration.sum"]], r[ix["dram__throughput.avg.pct_of_peak_sustained_elapsed"]])
PY
grep -hE "error|ERROR" "$O"/bench_pass*.log | head -5
cd "$OUT" && tar czf o267.tgz o267 && rm -rf o267
