#!/usr/bin/env bash
# Session 32, c156: 3c87d47e941bb9e9478899b2b0f6e4230e718eec, the new LayerTorch GPU tests (test_gpu_torch, Release with libtorch).
set -u
O=$OUT/o156; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c156.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && SOLBENCH_GIT_COMMIT=3c87d47e941bb9e9478899b2b0f6e4230e718eec timeout 300 cmake --build build/release -j 16 --target test_gpu_torch > "$O/build.log" 2>&1; t "build rc=$?"
grep -E "error" "$O/build.log" | head -20 >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 200 build/release/tests/test_gpu_torch --gtest_filter='LayerTorch*' > "$O/tests.log" 2>&1; t "LayerTorch rc=$? $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "OK \]|FAILED|Failure" "$O/tests.log" | head -20
cd "$OUT" && tar czf o156.tgz o156 && rm -rf o156
