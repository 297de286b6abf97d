#!/usr/bin/env bash
# Session 30, c134: 3f2c5bde2fa297c196346637fb43ca64b3eb026c (NOTES cleanups: l2_evict_last_policy in vec.cuh, PTX unchanged).
# Build (Release); the RMSNorm GPU tests; compute-sanitizer memcheck and racecheck over them (4 shards each,
# concurrently); then part 1 of the full bf16 run (bench_rmsnorm).
set -u
O=$OUT/o134; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c134.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf results/h200/logs
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 250 cmake --build build/release -j 16 > "$O/build.log" 2>&1; t "build rc=$?"
T=build/release/tests/test_gpu
F='*RmsNorm*'
SOLBENCH_REQUIRE_GPU=1 timeout 120 $T --gtest_filter="$F:*Harness*" --gtest_brief=1 > "$O/tests.log" 2>&1; t "tests rc=$? $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter="$F" --gtest_brief=1 > "$O/memcheck_$k.log" 2>&1 &
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter="$F" --gtest_brief=1 > "$O/racecheck_$k.log" 2>&1 &
done
wait
for f in "$O"/memcheck_*.log "$O"/racecheck_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'PASSED|FAILED' $f | tail -1)" >> "$O/exp.txt"; done
t "sanitizers done"
left=$(( 585 - ($(date +%s) - start) ))
SOLBENCH_GIT_COMMIT=3f2c5bde2fa297c196346637fb43ca64b3eb026c BENCHES=bench_rmsnorm REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite1.log" 2>&1
t "run_suite part 1 rc=$? (limit $left s)"
mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite1.log"; tail -3 "$O/suite1.log"
cd "$OUT" && tar czf o134.tgz o134 && rm -rf o134
