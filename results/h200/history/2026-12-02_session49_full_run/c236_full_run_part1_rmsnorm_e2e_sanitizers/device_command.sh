#!/usr/bin/env bash
# Session 49, c236: part 1 of a full bf16 run at 9219b4f (session 48's shorter decode block sum at 2 and 4 warps
# adopted; protocol v378): the Release build with libtorch, test_cpu, test_harness_cpu, the CLI test, test_gpu,
# LayerTorch, the harness self-test, then bench_rmsnorm and bench_e2e; then, while time is left, compute-sanitizer
# memcheck and racecheck over the RMSNorm GPU tests of this build, 4 shards each, the 8 processes concurrent.
set -u
O=$OUT/o236; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c236.sh "$O/device_command.sh"
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
grep "hot, us a launch" "$O/harness_selftest.log" >> "$O/exp.txt"
t "harness self-test rc=$rc $(grep -E 'PASSED|FAILED' "$O/harness_selftest.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
fi
if [ $ok = 1 ]; then
  left=$(( 520 - ($(date +%s) - start) ))
  BENCHES="bench_rmsnorm bench_e2e" REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
    SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite1.log" 2>&1
  t "run_suite part 1 rc=$?"
  mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
  grep -E "s, of it .* in .* calls of case bodies" results/h200/logs/bench.log >> "$O/exp.txt"
  left=$(( 560 - ($(date +%s) - start) ))
  if [ $left -gt 60 ]; then
    pids=""
    for tool in memcheck racecheck; do for k in 0 1 2 3; do
      GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k timeout $left compute-sanitizer --tool $tool --error-exitcode 1 \
        build/release/tests/test_gpu --gtest_filter='*RmsNorm*' --gtest_brief=1 > "$O/san_${tool}_$k.log" 2>&1 &
      pids+=" $!"
    done; done
    for p in $pids; do wait $p; echo "sanitizer pid $p rc=$?" >> "$O/exp.txt"; done
    t "sanitizers done"
    for f in "$O"/san_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $f | tr '\n' ' ')" >> "$O/exp.txt"; done
  else
    t "NOT RUN: sanitizers ($left s left)"
  fi
else
  t "NOT RUN: part 1 (a check above failed)"
fi
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite1.log" 2>/dev/null; tail -3 "$O/suite1.log" 2>/dev/null
grep -E "FAILED|Failure|error" "$O/tests_torch.log" "$O/test_cpu.log" "$O/bench_cli.log" 2>/dev/null | head
grep -B2 -A10 "error" "$O/build.log" | head -60
cd "$OUT" && tar czf o236.tgz o236 && rm -rf o236
