#!/usr/bin/env bash
# Session 25, call 3 (a865ce3679c6c6850c2f878dff751c73f7288d61): the harness GPU tests with FlushEvictsLinesMarkedEvictLast's hot figure fixed;
# torch.compile's RMSNorm, ours (vectorized, through libsolbench_probe.so), at::rms_norm and a copy in one
# process at the ANCHORS.md shapes under v26's protocol, v10's and do_bench; then the README's test command.
set -u
O=$OUT/o108; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c108.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 200 cmake --build build/release -j 16 > "$O/build.log" 2>&1; t "build rc=$?"
timeout 90 build/release/tests/test_harness_gpu > "$O/test_harness_gpu.log" 2>&1; t "test_harness_gpu rc=$?"
PYTHONUNBUFFERED=1 timeout 220 python3 scripts/timing_probe.py --protocols harness_reset_b4,harness_b4,do_bench \
  --calls compiled,vectorized,rms_norm,copy --shapes 1x4096,64x8192,2048x2048,4096x4096,16384x4096,32768x8192,65536x1024 \
  --lib build/release/bench/libsolbench_probe.so -o "$O/probe.json" > "$O/probe.log" 2>&1; t "timing_probe rc=$?"
left=$(( 570 - ($(date +%s) - start) ))
rm -rf build/ci; SOLBENCH_GIT_COMMIT=a865ce3679c6c6850c2f878dff751c73f7288d61 timeout $left cmake --workflow --preset ci > "$O/workflow.log" 2>&1; t "workflow rc=$? (limit $left s)"
cat "$O/exp.txt" "$O/gpu_start.txt"
grep -E "^\[ +(OK|FAILED|PASSED) |Failure|Expected|Which is|^flush" "$O/test_harness_gpu.log" | head -30
tail -40 "$O/probe.log"; grep -E "tests passed|tests failed|passed,|FAILED" "$O/workflow.log" | tail -5
cd "$OUT" && tar czf o108.tgz o108 && rm -rf o108
