#!/usr/bin/env bash
# Session 27, c121: a3ea738a62b45ff0ba1c6115afed0e7f70ea1a6b. (1) A copy of the tree without vectorized's pdl_wait builds test_gpu, whose
# WaitsForTheKernelAheadThatWritesX (now with a warm-up launch and a ~0.5 ms spin) must fail for vectorized
# at every shape; (2) the README's test command in a clean build/ci: cmake --workflow --preset ci.
set -u
O=$OUT/o121; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c121.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf /tmp/nowait && mkdir -p /tmp/nowait && cp -r CMakeLists.txt CMakePresets.json kernels bench ref tests scripts cmake /tmp/nowait/
sed -i '/pdl_wait();  \/\/ before any access/d' /tmp/nowait/kernels/rmsnorm/vectorized.cu
echo "pdl_wait lines left in the copy's vectorized.cu: $(grep -c 'pdl_wait()' /tmp/nowait/kernels/rmsnorm/vectorized.cu)" >> "$O/exp.txt"
( cd /tmp/nowait && cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/nowait_configure.log" 2>&1 \
  && SOLBENCH_GIT_COMMIT=a3ea738a62b45ff0ba1c6115afed0e7f70ea1a6b timeout 200 cmake --build b -j 16 --target test_gpu > "$O/nowait_build.log" 2>&1 ); t "nowait build rc=$?"
SOLBENCH_REQUIRE_GPU=1 timeout 60 /tmp/nowait/b/tests/test_gpu --gtest_filter='*WaitsForTheKernelAheadThatWritesX*' > "$O/nowait_test.log" 2>&1
t "nowait test rc=$? (must be non-zero); failed: $(grep -E '^\[  FAILED  \] All' "$O/nowait_test.log" | sed 's/,.*//; s/.*\///' | sort -u | tr '\n' ' '); shapes caught: $(grep -oE '^[0-9]+ x [0-9]+: row' "$O/nowait_test.log" | sort | uniq -c | tr '\n' ' ')"
rm -rf build/ci
SOLBENCH_GIT_COMMIT=a3ea738a62b45ff0ba1c6115afed0e7f70ea1a6b timeout 480 cmake --workflow --preset ci > "$O/workflow.log" 2>&1
t "workflow rc=$?"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "tests passed|tests failed|Failed|\(Failed\)|Total Test time" "$O/workflow.log" | tail -8
grep -c "Skipped" "$O/workflow.log"; grep -E "WaitsForTheKernelAhead" "$O/workflow.log" | head -3
gzip "$O/workflow.log" "$O/nowait_build.log"
cd "$OUT" && tar czf o121.tgz o121 && rm -rf o121
