#!/usr/bin/env bash
# Session 56, c275: experiments/decode_read_pipe.patch (ref_kv_read's sums through a cp.async pipeline, S stages x M
# blocks an SM), its prediction committed first (experiments/README.md at d79b7ee). A short first look in the session's
# last device seconds: patched release build; AttentionKvRead (checking every pipeline), memcheck and racecheck over it;
# bench_attention at GQA b16 KV 32768 and MHA b256 KV 1024 beside ref_kv_read and SDPA cuDNN, bf16, cold, 3 repetitions,
# ONE process (the usual second process did not fit).
set -u
O=$OUT/o275; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c275.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git apply experiments/decode_read_pipe.patch; t "patch rc=$?"; git status --short > "$O/tree_status.txt"
B=build/release
cmake --preset release > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target bench_attention test_gpu >> "$O/build.log" 2>&1; t "build rc=$?"
$B/tests/test_gpu --gtest_filter='AttentionKvRead.*' > "$O/test.log" 2>&1; t "test_gpu rc=$?"
SHARDS=1 TIMEOUT=60 scripts/sanitize.sh $B/tests/test_gpu "$O/san" memcheck,racecheck 'AttentionKvRead.*' > "$O/sanitize.txt" 2>&1; t "sanitize rc=$?"
cat "$O/exp.txt"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$O/test.log"; tail -2 "$O/sanitize.txt"
S=b16_hq32_hkv8_d128_q1_kv32768,b256_hq32_hkv32_d128_q1_kv1024
F='^attention/(ref_kv_read|ref_kv_pipe[0-9x]+|torch_sdpa_cudnn)/bf16/decode/.*/cold'
timeout 90 $B/bench/bench_attention --shapes=$S --dtypes=bf16 --benchmark_filter="$F" --benchmark_repetitions=3 \
  --benchmark_display_aggregates_only=true --benchmark_out="$O/bench_pass1.json" --benchmark_out_format=json > "$O/bench_pass1.log" 2>&1
t "bench pass 1 rc=$?"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
gzip -9 -n "$O/build.log"; for f in "$O"/san_*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
tail -1 "$O/exp.txt"; head -2 "$O/gpu_start.txt" | tail -1
python3 - "$O" <<'PY'
import json, sys, collections
t = collections.defaultdict(dict)
try: d = json.load(open(f"{sys.argv[1]}/bench_pass1.json"))
except Exception as e: sys.exit(f"pass 1: {e}")
for b in d["benchmarks"]:
    if b.get("aggregate_name") == "median":
        parts = b["name"].split("/"); t[parts[4]][parts[1]] = b["real_time"]
for shape, row in sorted(t.items()):
    r = row.get("ref_kv_read")
    print(f"{shape:34s} " + " ".join(f"{k.replace('ref_kv_', '').replace('torch_sdpa_', '')}={v:.1f}" + (f"({v / r:.4f})" if r else "") for k, v in sorted(row.items())))
PY
grep -hE "ERROR OCCURRED" "$O"/bench_pass*.log | head -3
