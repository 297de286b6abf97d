#!/usr/bin/env bash
# Session 24, call 5: c99_probe.py (its docstring), in a fresh process, then its control.
set -u
O=$OUT/o99; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c99.sh .devcall/s/c99_probe.py "$O/"
nvidia-smi --query-gpu=uuid --format=csv > "$O/gpu_start.txt" 2>&1
if [ ! -f build/ci/bench/libsolbench_probe.so ]; then
  rm -rf build/ci; cmake --preset ci > "$O/configure.log" 2>&1 && timeout 200 cmake --build build/ci --target solbench_probe > "$O/build.log" 2>&1
fi
echo "built at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
export TORCHINDUCTOR_CACHE_DIR=/tmp/ind2 TRITON_CACHE_DIR=/tmp/tri2
timeout 120 python3 .devcall/s/c99_probe.py > "$O/stages.log" 2>&1; echo "stages rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
timeout 60 python3 .devcall/s/c99_probe.py control > "$O/control.log" 2>&1; echo "control rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; tail -12 "$O/stages.log"; tail -6 "$O/control.log"
cd "$OUT" && tar czf o99.tgz o99 && rm -rf o99
