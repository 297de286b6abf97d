#!/usr/bin/env bash
# Session 43, c212: part 1 of a full bf16 run at 6f71669 under protocol v58, with the inputs of each shape resident
# across cases (harness/resident.h; new, first on a GPU): the Release build with libtorch, every GPU test of test_gpu,
# the LayerTorch tests (02b99ed's and 6f71669's bench_e2e changes: first on a GPU), the harness self-test, the CLI
# test with bench_e2e, then bench_rmsnorm and bench_e2e (run_suite part 1; 185 s and 151 s in session 42's c207), and
# bench_e2e again with --keep-inputs=0 (one layer at a time, as before 6f71669) for the time it saves.
set -u
O=$OUT/o212; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c212.sh "$O/device_command.sh"
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
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu --gtest_brief=1 > "$O/tests.log" 2>&1; rc=$?
t "all GPU tests rc=$rc $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu_torch --gtest_filter='LayerTorch*' > "$O/tests_torch.log" 2>&1; rc=$?
t "LayerTorch tests rc=$rc $(grep -E 'PASSED|FAILED' "$O/tests_torch.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
timeout 90 build/release/tests/test_harness_gpu > "$O/harness_selftest.log" 2>&1; rc=$?
t "harness self-test rc=$rc $(grep -E 'PASSED|FAILED' "$O/harness_selftest.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
fi
if [ $ok = 1 ]; then
  left=$(( 585 - ($(date +%s) - start) ))
  BENCHES="bench_rmsnorm bench_e2e" REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
    SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite1.log" 2>&1
  t "run_suite part 1 rc=$?"
  mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
  grep -E "s, of it .* in .* calls of case bodies" results/h200/logs/bench.log >> "$O/exp.txt"
  left=$(( 585 - ($(date +%s) - start) ))
  if [ $left -gt 160 ]; then
    mkdir -p "$O/ab"
    ( time timeout $left build/release/bench/bench_e2e --shapes=default --dtypes=bf16 --keep-inputs=0 --benchmark_repetitions=3 \
      --benchmark_display_aggregates_only=true --benchmark_out="$O/ab/bench_e2e_keep0.json" --benchmark_out_format=json ) > "$O/ab/bench_e2e_keep0.log" 2>&1
    t "bench_e2e --keep-inputs=0 rc=$? $(grep real "$O/ab/bench_e2e_keep0.log")"
    grep -E "s, of it .* in .* calls of case bodies" "$O/ab/bench_e2e_keep0.log" >> "$O/exp.txt"
  else
    t "NOT RUN: bench_e2e --keep-inputs=0 ($left s left)"
  fi
else
  t "NOT RUN: part 1 (a check above failed)"
fi
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite1.log" 2>/dev/null; tail -3 "$O/suite1.log" 2>/dev/null
grep -E "FAILED|Failure|error" "$O/tests_torch.log" "$O/test_cpu.log" "$O/bench_cli.log" 2>/dev/null | head
grep -B2 -A10 "error" "$O/build.log" | head -60
cd "$OUT" && tar czf o212.tgz o212 && rm -rf o212
