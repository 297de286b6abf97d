#!/usr/bin/env bash
# Session 24, call 3 (call 2's RMSNorm half, whose files did not come back): the C++ harness with
# SOLBENCH_MIN_HOLD_US = 0 (default) and 40, order 0 40 40 0; timing_probe.py at fixed holds of 7 and
# 40 us, then 7 again; vectorized and the copies at 2048^2 and 256 x 4096.
set -u
O=$OUT/o97; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c97.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf build/ci
(cmake --preset ci > "$O/configure.log" 2>&1 && timeout 200 cmake --build build/ci --target solbench_probe bench_rmsnorm > "$O/build.log" 2>&1) \
  || { echo "build failed" >> "$O/exp.txt"; tail -40 "$O/build.log"; }
echo "built at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
i=0
for mh in 0 40 40 0; do
  i=$((i+1))
  SOLBENCH_MIN_HOLD_US=$mh timeout 60 build/ci/bench/bench_rmsnorm --shapes=2048x2048,256x4096 --dtypes=bf16 \
    --benchmark_filter='(vectorized|ref_copy|ref_copy_kernel|floor).*cold' --benchmark_repetitions=3 \
    --benchmark_out="$O/rms_r${i}_h${mh}.json" --benchmark_out_format=json > "$O/rms_r${i}_h${mh}.log" 2>&1
  echo "rms run $i hold $mh rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
i=0
for hold in 7 40 7; do
  i=$((i+1))
  timeout 60 python3 scripts/timing_probe.py -o "$O/probe_r${i}_hold_$hold.json" --shapes 2048x2048,256x4096 \
    --protocols harness_b4 --calls vectorized,copy --rounds 3 --hold-us $hold \
    --lib build/ci/bench/libsolbench_probe.so > "$O/probe_r${i}_hold_$hold.log" 2>&1
  echo "probe run $i hold $hold rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt"; cat "$O"/probe_r*.log
python3 - "$O" <<'PY'
import json, sys, glob, os
o = sys.argv[1]
rows = {}
for f in sorted(glob.glob(os.path.join(o, "rms_r*_h*.json"))):
    tag = os.path.basename(f)[4:-5]
    try:
        d = json.load(open(f))
    except Exception as e:
        print(tag, "unreadable", e); continue
    for b in d["benchmarks"]:
        if b["name"].endswith("_median"):
            rows.setdefault(b["name"].replace("/manual_time_median", ""), {})[tag] = b["real_time"]
for n, v in rows.items():
    print(f"{n:50s} " + " ".join(f"{k}:{v[k]:.2f}" for k in sorted(v)))
PY
cd "$OUT" && tar czf o97.tgz o97 && rm -rf o97
