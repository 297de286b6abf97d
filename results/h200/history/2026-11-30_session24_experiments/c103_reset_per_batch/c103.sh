#!/usr/bin/env bash
# Session 24, call 9: c103_probe.py (its docstring), in a fresh process.
set -u
O=$OUT/o103; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c103.sh .devcall/s/c103_probe.py "$O/"
nvidia-smi --query-gpu=uuid --format=csv > "$O/gpu_start.txt" 2>&1
if [ ! -f build/ci/bench/libsolbench_probe.so ]; then
  rm -rf build/ci; cmake --preset ci > "$O/configure.log" 2>&1 && timeout 200 cmake --build build/ci --target solbench_probe > "$O/build.log" 2>&1
fi
echo "built at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
export TORCHINDUCTOR_CACHE_DIR=/tmp/ind2 TRITON_CACHE_DIR=/tmp/tri2
timeout 200 python3 .devcall/s/c103_probe.py > "$O/stages.log" 2>&1; echo "stages rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/stages.log"
cd "$OUT" && tar czf o103.tgz o103 && rm -rf o103
