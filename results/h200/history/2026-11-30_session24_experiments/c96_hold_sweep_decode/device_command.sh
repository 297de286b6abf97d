#!/usr/bin/env bash
# Session 24, call 2: does a ~10 us cold figure depend on how long the GPU idles between the flush and the
# launch? The C++ harness with SOLBENCH_MIN_HOLD_US = 0 (default: the hold is twice the launch's host
# time, ~7 us for our kernels, 22-37 us for at::rms_norm), 20, 40, 80, in two passes of reversed order;
# RMSNorm vectorized and both copies, decode_splitk b1 KV 1024/4096. Then timing_probe.py in Python at
# fixed holds of 7 and 40 us (and the default), vectorized, copy and torch.rms_norm.
set -u
O=$OUT/o96; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c96.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf build/ci
(cmake --preset ci > "$O/configure.log" 2>&1 && cmake --build build/ci --target solbench_probe bench_rmsnorm bench_attention > "$O/build.log" 2>&1) \
  || { echo "build failed" >> "$O/exp.txt"; tail -40 "$O/build.log"; }
echo "built at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
RS=2048x2048,256x4096,4096x4096,16384x4096,1x4096,64x8192
AS=b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv1024,b16_hq32_hkv8_d128_q1_kv8192
for pass in 1 2; do
  order="0 20 40 80"; [ $pass = 2 ] && order="80 40 20 0"
  for mh in $order; do
    SOLBENCH_MIN_HOLD_US=$mh timeout 100 build/ci/bench/bench_rmsnorm --shapes=$RS --dtypes=bf16 \
      --benchmark_filter='(vectorized|ref_copy|ref_copy_kernel|floor).*cold' --benchmark_repetitions=3 \
      --benchmark_out="$O/rms_p${pass}_h${mh}.json" --benchmark_out_format=json > "$O/rms_p${pass}_h${mh}.log" 2>&1
    echo "rms pass $pass hold $mh rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
    SOLBENCH_MIN_HOLD_US=$mh timeout 100 build/ci/bench/bench_attention --shapes=$AS --dtypes=bf16 \
      --benchmark_filter='(decode_splitk|floor).*cold' --benchmark_repetitions=3 \
      --benchmark_out="$O/att_p${pass}_h${mh}.json" --benchmark_out_format=json > "$O/att_p${pass}_h${mh}.log" 2>&1
    echo "att pass $pass hold $mh rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
  done
done
for hold in 7 40 default; do
  arg=""; [ $hold != default ] && arg="--hold-us $hold"
  timeout 100 python3 scripts/timing_probe.py -o "$O/probe_hold_$hold.json" --shapes 2048x2048,256x4096,16384x4096 \
    --protocols harness_b4 --calls vectorized,copy,rms_norm --rounds 3 $arg \
    --lib build/ci/bench/libsolbench_probe.so > "$O/probe_hold_$hold.log" 2>&1
  echo "probe hold $hold rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt"; cat "$O"/probe_hold_*.log | grep -v "^\s*$" | tail -30
python3 - "$O" <<'PY'
import json, sys, glob, os
o = sys.argv[1]
rows = {}
for f in sorted(glob.glob(os.path.join(o, "*_p*_h*.json"))):
    tag = os.path.basename(f)[:-5]
    try:
        d = json.load(open(f))
    except Exception as e:
        print(tag, "unreadable", e); continue
    for b in d["benchmarks"]:
        if b["name"].endswith("_median"):
            rows.setdefault(b["name"].replace("/manual_time_median", ""), {})[tag.split("_", 1)[1]] = b["real_time"]
for n, v in rows.items():
    print(f"{n:70s} " + " ".join(f"{k}:{v[k]:.2f}" for k in sorted(v)))
PY
cd "$OUT" && tar czf o96.tgz o96 && rm -rf o96
