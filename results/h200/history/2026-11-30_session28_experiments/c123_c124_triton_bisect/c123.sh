#!/usr/bin/env bash
# Session 28, c123: Triton bisect of torch.compile's RMSNorm at 32768 x 8192 (c123_bisect.py), one process, v26.
set -u
O=$OUT/o123; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c123.sh .devcall/s/c123_bisect.py "$O/"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf build/ci
(cmake --preset ci > "$O/configure.log" 2>&1 && cmake --build build/ci --target solbench_probe > "$O/build.log" 2>&1) \
  || { echo "build failed" >> "$O/exp.txt"; tail -40 "$O/build.log"; }
echo "built at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
export TORCHINDUCTOR_CACHE_DIR=$O/inductor_cache TRITON_CACHE_DIR=$O/triton_cache
timeout 400 python3 .devcall/s/c123_bisect.py "$O/bisect.json" build/ci/bench/libsolbench_probe.so > "$O/bisect.log" 2>&1
echo "bisect rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
(cd "$O" && tar czf triton_cache.tgz triton_cache && rm -rf triton_cache inductor_cache) 2>/dev/null
cat "$O/exp.txt"; tail -45 "$O/bisect.log"
cd "$OUT" && tar czf o123.tgz o123 && rm -rf o123
