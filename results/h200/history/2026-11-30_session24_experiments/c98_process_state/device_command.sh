#!/usr/bin/env bash
# Session 24, call 4: why call 1's Python process timed 2048^2 ~1.3 us faster than the C++ harness on the
# same GPU, and call 3's did not. Four Python processes on one GPU, 2048^2, default hold (twice the host
# time): P1 = call 1's command (compiled first, do_bench interleaved), P2 = neither, P3 = do_bench
# interleaved only, P4 = compiled only; then the C++ harness; then P2 and P1 again.
set -u
O=$OUT/o98; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c98.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf build/ci
(cmake --preset ci > "$O/configure.log" 2>&1 && timeout 200 cmake --build build/ci --target solbench_probe bench_rmsnorm > "$O/build.log" 2>&1) \
  || { echo "build failed" >> "$O/exp.txt"; tail -40 "$O/build.log"; }
echo "built at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
export TORCHINDUCTOR_CACHE_DIR=/tmp/ind TRITON_CACHE_DIR=/tmp/tri
probe() {  # tag protocols calls
  timeout 90 python3 scripts/timing_probe.py -o "$O/$1.json" --shapes 2048x2048,256x4096 --protocols $2 --calls $3 \
    --rounds 3 --lib build/ci/bench/libsolbench_probe.so > "$O/$1.log" 2>&1
  echo "$1 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
}
probe P1_compile_dobench harness_b4,do_bench compiled,vectorized,copy,rms_norm
probe P2_plain harness_b4 vectorized,copy,rms_norm
probe P3_dobench harness_b4,do_bench vectorized,copy,rms_norm
probe P4_compile harness_b4 compiled,vectorized,copy,rms_norm
timeout 60 build/ci/bench/bench_rmsnorm --shapes=2048x2048,256x4096 --dtypes=bf16 \
  --benchmark_filter='(vectorized|ref_copy|ref_copy_kernel|floor).*cold' --benchmark_repetitions=3 \
  --benchmark_out="$O/cxx.json" --benchmark_out_format=json > "$O/cxx.log" 2>&1
echo "cxx rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
probe P2_plain_again harness_b4 vectorized,copy,rms_norm
probe P1_again harness_b4,do_bench compiled,vectorized,copy,rms_norm
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt"; for f in "$O"/P*.log; do echo "== $(basename $f)"; grep -E "^[0-9]" "$f"; done
python3 - "$O/cxx.json" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b["name"].endswith("_median"): print(f"{b['name']:60s} {b['real_time']:.2f}")
PY
cd "$OUT" && tar czf o98.tgz o98 && rm -rf o98
