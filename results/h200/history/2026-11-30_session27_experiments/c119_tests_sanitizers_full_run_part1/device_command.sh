#!/usr/bin/env bash
# Session 27, c119: 7f16350e3d4871d6701d8fb31ab4ec63e60e6cae (rmsnorm_decode_pdl adopted, PDL helper shared with decode_splitk). Build (Release);
# the RMSNorm and decode GPU tests; compute-sanitizer memcheck over them and racecheck over the RMSNorm tests
# (4 shards each, concurrently), while a copy of the tree without vectorized's pdl_wait builds test_gpu, whose
# WaitsForTheKernelAheadThatWritesX must then fail; then part 1 of the full bf16 run (bench_rmsnorm).
set -u
O=$OUT/o119; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c119.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf results/h200/logs
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 250 cmake --build build/release -j 16 > "$O/build.log" 2>&1; t "build rc=$?"
T=build/release/tests/test_gpu
F='*RmsNorm*:*DecodeSplitk*:*AttentionGpu*decode_splitk*'
SOLBENCH_REQUIRE_GPU=1 timeout 120 $T --gtest_filter="$F" --gtest_brief=1 > "$O/tests.log" 2>&1; t "tests rc=$? $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"
# The copy without the wait, built in the background at low priority.
rm -rf /tmp/nowait && mkdir -p /tmp/nowait && cp -r CMakeLists.txt CMakePresets.json kernels bench ref tests scripts cmake /tmp/nowait/ 2>/dev/null
sed -i '/pdl_wait();  \/\/ before any access/d' /tmp/nowait/kernels/rmsnorm/vectorized.cu
echo "pdl_wait lines left in the copy's vectorized.cu: $(grep -c 'pdl_wait()' /tmp/nowait/kernels/rmsnorm/vectorized.cu)" >> "$O/exp.txt"
( cd /tmp/nowait && cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/nowait_configure.log" 2>&1 \
  && nice -n 19 timeout 250 cmake --build b -j 6 --target test_gpu > "$O/nowait_build.log" 2>&1; echo "nowait build rc=$?" >> "$O/exp.txt" ) &
nb=$!
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout 260 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter="$F" --gtest_brief=1 > "$O/memcheck_$k.log" 2>&1 &
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout 260 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter='*RmsNorm*' --gtest_brief=1 > "$O/racecheck_$k.log" 2>&1 &
done
wait
for f in "$O"/memcheck_*.log "$O"/racecheck_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'PASSED|FAILED' $f | tail -1)" >> "$O/exp.txt"; done
t "sanitizers done"
SOLBENCH_REQUIRE_GPU=1 timeout 60 /tmp/nowait/b/tests/test_gpu --gtest_filter='*WaitsForTheKernelAheadThatWritesX*' > "$O/nowait_test.log" 2>&1
t "nowait test rc=$? (must be non-zero) $(grep -cE '^\[  FAILED  \] RmsNorm' "$O/nowait_test.log") failed: $(grep -E '^\[  FAILED  \] RmsNorm' "$O/nowait_test.log" | sed 's/.*\.//' | tr '\n' ' ')"
left=$(( 585 - ($(date +%s) - start) ))
SOLBENCH_GIT_COMMIT=7f16350e3d4871d6701d8fb31ab4ec63e60e6cae BENCHES=bench_rmsnorm REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite1.log" 2>&1
t "run_suite part 1 rc=$? (limit $left s)"
mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite1.log"; tail -3 "$O/suite1.log"
cd "$OUT" && tar czf o119.tgz o119 && rm -rf o119
