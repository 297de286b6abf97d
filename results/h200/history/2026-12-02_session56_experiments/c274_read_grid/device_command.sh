#!/usr/bin/env bash
# Session 56, c274: experiments/decode_read_grid.patch (ref_kv_read's sweep with at most M = 1, 2, 3, 4, 8 blocks an SM),
# its prediction committed first (experiments/README.md at 3a4df21): does a read with fewer requests in flight read faster?
# Patched release build; AttentionKvRead (checking every grid), memcheck and racecheck over it; bench_attention at three
# decode shapes beside ref_kv_read, decode_splitk and SDPA cuDNN, bf16, cold, 5 repetitions, two processes.
set -u
O=$OUT/o274; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c274.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git apply experiments/decode_read_grid.patch; t "patch rc=$?"; git status --short > "$O/tree_status.txt"
B=build/release
cmake --preset release > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target bench_attention test_gpu >> "$O/build.log" 2>&1; t "build rc=$?"
$B/tests/test_gpu --gtest_filter='AttentionKvRead.*:AttentionKvStream.*' > "$O/test.log" 2>&1; t "test_gpu rc=$?"
SHARDS=1 TIMEOUT=120 scripts/sanitize.sh $B/tests/test_gpu "$O/san" memcheck,racecheck 'AttentionKvRead.*' > "$O/sanitize.txt" 2>&1; t "sanitize rc=$?"
S=b16_hq32_hkv8_d128_q1_kv32768,b256_hq32_hkv32_d128_q1_kv1024,b16_hq32_hkv8_d128_q1_kv8192
F='^attention/(decode_splitk|ref_kv_read|ref_kv_grid[0-9]+|torch_sdpa_cudnn)/bf16/decode/.*/cold'
for pass in 1 2; do
  timeout 120 $B/bench/bench_attention --shapes=$S --dtypes=bf16 --benchmark_filter="$F" --benchmark_repetitions=5 \
    --benchmark_display_aggregates_only=true --benchmark_out="$O/bench_pass$pass.json" --benchmark_out_format=json > "$O/bench_pass$pass.log" 2>&1
  t "bench pass $pass rc=$?"
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
    print(f"{shape:34s} p{pas} " + " ".join(f"{k.replace('ref_kv_', '').replace('torch_sdpa_', '')}={v:.1f}" + (f"({v / r:.4f})" if r else "") for k, v in sorted(row.items())))
PY
grep -hE "ERROR OCCURRED" "$O"/bench_pass*.log | head -3
cd "$OUT" && tar czf o274.tgz o274 && rm -rf o274
