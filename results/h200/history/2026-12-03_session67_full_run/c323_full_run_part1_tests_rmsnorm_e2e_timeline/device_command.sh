#!/usr/bin/env bash
# Session 67, c323: part 1 of a full bf16 run at 035a107 (kernels as 9cdd933, the decode set with the two Llama-3-70B shapes, and the layer timeline stage after bench_e2e) (530089d: vectorized's PDL release after its wait, and the
# PDL floor's empty kernel in the same order; 61e60dd: HarnessGpu.VectorizedHotTimeIsLevelAlongTheChain), with its
# cross-check in part 3 so it can be adopted: the Release build with libtorch, test_cpu, test_harness_cpu, the CLI
# test, test_gpu, LayerTorch, the harness self-tests, bench_rmsnorm and bench_e2e. The sanitizers ran in session 62 (c301).
set -u
O=$OUT/o323; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c323.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
ok=1
rm -rf results/h200/logs
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 300 cmake --build build/release -j 16 > "$O/build.log" 2>&1; rc=$?; t "build rc=$rc"; [ $rc = 0 ] || ok=0
grep -E "error|warning" "$O/build.log" | head -20 >> "$O/exp.txt"
if [ $ok = 1 ]; then
build/release/tests/test_cpu --gtest_brief=1 > "$O/test_cpu.log" 2>&1; rc=$?; t "test_cpu rc=$rc $(grep -E 'PASSED|FAILED' "$O/test_cpu.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
build/release/tests/test_harness_cpu --gtest_brief=1 > "$O/test_harness_cpu.log" 2>&1; rc=$?; t "test_harness_cpu rc=$rc $(grep -E 'PASSED|FAILED' "$O/test_harness_cpu.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
timeout 120 python3 tests/test_bench_cli.py build/release/bench/bench_rmsnorm build/release/bench/bench_attention build/release/bench/bench_e2e > "$O/bench_cli.log" 2>&1; rc=$?; t "bench_cli rc=$rc $(tail -1 "$O/bench_cli.log")"; [ $rc = 0 ] || ok=0
SOLBENCH_REQUIRE_GPU=1 timeout 180 build/release/tests/test_gpu --gtest_brief=1 > "$O/tests.log" 2>&1; rc=$?
t "all GPU tests rc=$rc $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu_torch --gtest_filter='LayerTorch*' > "$O/tests_torch.log" 2>&1; rc=$?
t "LayerTorch tests rc=$rc $(grep -E 'PASSED|FAILED' "$O/tests_torch.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
timeout 90 build/release/tests/test_harness_gpu > "$O/harness_selftest.log" 2>&1; rc=$?
grep "hot, us a launch" "$O/harness_selftest.log" >> "$O/exp.txt"
t "harness self-test rc=$rc $(grep -E 'PASSED|FAILED' "$O/harness_selftest.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
fi
if [ $ok = 1 ]; then
  left=$(( 565 - ($(date +%s) - start) ))
  BENCHES="bench_rmsnorm bench_e2e" REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
    SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite1.log" 2>&1
  t "run_suite part 1 rc=$?"
  mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
  grep -E "s, of it .* in .* calls of case bodies" results/h200/logs/bench.log >> "$O/exp.txt"
else
  t "NOT RUN: part 1 (a check above failed)"
fi
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite1.log" 2>/dev/null; tail -3 "$O/suite1.log" 2>/dev/null
grep -E "FAILED|Failure" "$O/tests.log" "$O/tests_torch.log" "$O/test_cpu.log" "$O/bench_cli.log" 2>/dev/null | head -20
grep -B2 -A10 "error" "$O/build.log" | head -60
gzip -9 -n "$O/build.log" "$O/tests.log" 2>/dev/null
cd "$OUT" && tar czf o323.tgz o323 && rm -rf o323
