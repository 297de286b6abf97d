#!/usr/bin/env bash
# Session 24, call 1: the 2048^2 anchor gap, one process. The suite's vectorized kernel called from Python
# (bench/probe_capi.cpp's library, ctypes) beside torch.compile's kernel, a D2D copy of the bytes and
# torch.rms_norm, under the harness's protocol (harness_b4) and do_bench, interleaved over rounds; then
# the C++ harness (bench_rmsnorm, ci build: no libtorch) on the same shapes. Inductor's and Triton's
# caches are kept (the compiled kernel's source, PTX and cubin).
set -u
O=$OUT/o95; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c95.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf build/ci
(cmake --preset ci > "$O/configure.log" 2>&1 && cmake --build build/ci --target solbench_probe bench_rmsnorm > "$O/build.log" 2>&1) \
  || { echo "build failed" >> "$O/exp.txt"; tail -40 "$O/build.log"; }
echo "built at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
SH=2048x2048,32768x8192,16384x4096,65536x1024,4096x4096,1x4096,64x8192
export TORCHINDUCTOR_CACHE_DIR=$O/inductor_cache TRITON_CACHE_DIR=$O/triton_cache
timeout 330 python3 scripts/timing_probe.py -o "$O/probe.json" --shapes $SH --protocols harness_b4,do_bench \
  --calls compiled,vectorized,copy,rms_norm --rounds 3 --lib build/ci/bench/libsolbench_probe.so > "$O/probe.log" 2>&1
echo "probe rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
timeout 120 build/ci/bench/bench_rmsnorm --shapes=$SH --dtypes=bf16 --benchmark_filter='vectorized|ref_copy|floor' \
  --benchmark_repetitions=3 --benchmark_out="$O/bench_rmsnorm_ci.json" --benchmark_out_format=json > "$O/bench.log" 2>&1
echo "bench rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt"; tail -30 "$O/probe.log"
cd "$OUT" && tar czf o95.tgz o95 && rm -rf o95
