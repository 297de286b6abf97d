#!/usr/bin/env bash
# Session 29, c131: tree 3a88b82e55d021c03f53775ae31e30a7368ef4a0 (3a88b82 + experiments/decode_kv_l2_policy.patch's =62 edit, outside kernels/).
# scripts/timing_probe.py at the seven anchor shapes under v26 (harness_reset_b4) and do_bench, torch.compile's
# RMSNorm beside vectorized (which since session 28 loads x evict-last, as Inductor's kernel does) and the copy;
# then the README's test command (cmake --workflow --preset ci) from a clean build folder.
set -u
O=$OUT/o131; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c131.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 200 cmake --build build/release -j 16 --target solbench_probe > "$O/build.log" 2>&1; t "build rc=$?"
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/timing_probe.py --protocols harness_reset_b4,do_bench \
  --calls compiled,vectorized,copy --shapes 1x4096,64x8192,2048x2048,4096x4096,16384x4096,32768x8192,65536x1024 \
  --lib build/release/bench/libsolbench_probe.so -o "$O/probe.json" > "$O/probe.log" 2>&1; t "timing_probe rc=$?"
left=$(( 575 - ($(date +%s) - start) ))
rm -rf build/ci; SOLBENCH_GIT_COMMIT=3a88b82e55d021c03f53775ae31e30a7368ef4a0 timeout $left cmake --workflow --preset ci > "$O/workflow.log" 2>&1; t "workflow rc=$? (limit $left s)"
cat "$O/exp.txt" "$O/gpu_start.txt"
tail -30 "$O/probe.log"; grep -E "tests passed|tests failed|passed,|FAILED" "$O/workflow.log" | tail -5
cd "$OUT" && tar czf o131.tgz o131 && rm -rf o131
