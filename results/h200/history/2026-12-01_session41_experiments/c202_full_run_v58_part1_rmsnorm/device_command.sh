#!/usr/bin/env bash
# Session 41, c202: part 1 of the full bf16 run at 392cb72 under protocol v58 (the repetitions of all cases in random
# order): the Release build with libtorch, every GPU test of test_gpu, the harness self-test (the harness changed in
# bdfa57b), then bench_rmsnorm (run_suite part 1). Parts 2 (bench_attention's decode set) and 3 (bench_e2e,
# bench_attention's prefill set, the cross-check) follow in c203 and c204 on the same machine.
set -u
O=$OUT/o202; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c202.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
ok=1
rm -rf results/h200/logs
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 300 cmake --build build/release -j 16 > "$O/build.log" 2>&1; rc=$?; t "build rc=$rc"; [ $rc = 0 ] || ok=0
grep -E "error|warning" "$O/build.log" | head -20 >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu --gtest_brief=1 > "$O/tests.log" 2>&1; rc=$?
t "all GPU tests rc=$rc $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
timeout 90 build/release/tests/test_harness_gpu > "$O/harness_selftest.log" 2>&1; rc=$?
t "harness self-test rc=$rc $(grep -E 'PASSED|FAILED' "$O/harness_selftest.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
if [ $ok = 1 ]; then
  left=$(( 590 - ($(date +%s) - start) ))
  BENCHES="bench_rmsnorm" REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
    SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite1.log" 2>&1
  t "run_suite part 1 rc=$?"
  mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
else
  t "NOT RUN: part 1 (a check above failed)"
fi
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite1.log" 2>/dev/null; tail -3 "$O/suite1.log" 2>/dev/null
grep -E "^spin|^clock|^copy|^H200" "$O/harness_selftest.log" | head
cd "$OUT" && tar czf o202.tgz o202 && rm -rf o202
