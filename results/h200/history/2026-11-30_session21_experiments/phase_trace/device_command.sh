#!/usr/bin/env bash
# Session 21, call 5: decode_splitk_phase_trace.patch (=57, instrumentation only): the clustered kernel's
# phases at b1 GQA KV 1024 and 4096, hot, cold after the memset flush and cold after the read flush
# (DecodeSplitkTrace.PhasesAtB1), then the decode GPU tests of that build.
set -u
O=$OUT/o85; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c85.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
src=build/exp_src; B=build/exp57
rm -rf $src && mkdir -p $src && tar --exclude=./build --exclude=./.git -cf - . | tar -C $src -xf - &&
  patch -d $src -p1 --quiet < experiments/decode_splitk_phase_trace.patch &&
  cmake -S $src -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
    "-DCMAKE_CUDA_FLAGS=-DSB_DECODE_EXPERIMENT=57" "-DCMAKE_CXX_FLAGS=-DSB_DECODE_EXPERIMENT=57" > "$O/build.log" 2>&1 &&
  cmake --build $B -j 16 --target test_gpu >> "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 200 $B/tests/test_gpu --gtest_filter='DecodeSplitkTrace.*' > "$O/trace.log" 2>&1
echo "trace rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 120 $B/tests/test_gpu --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/tests.log" 2>&1
echo "tests rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o85.tgz o85 && rm -rf o85
