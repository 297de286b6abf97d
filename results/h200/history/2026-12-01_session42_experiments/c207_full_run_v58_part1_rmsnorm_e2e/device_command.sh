#!/usr/bin/env bash
# Session 42, c207: part 1 of the full bf16 run at 1bb85fb under protocol v58 (the repetitions of all cases in random
# order): the Release build with libtorch, every GPU test of test_gpu (AttentionReference.KeptOnlyForTheSameInputs new
# in 4c78ac4), the LayerTorch tests of test_gpu_torch (ReferencesAreKeptOnlyForTheSameWeightsAndInputs new in 1bb85fb),
# the harness self-test, then bench_rmsnorm and bench_e2e (run_suite part 1). Part 2 (bench_attention's decode set) and
# part 3 (its prefill set and the cross-check) follow in c208 and c209.
set -u
O=$OUT/o207; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c207.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
ok=1
rm -rf results/h200/logs
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 300 cmake --build build/release -j 16 > "$O/build.log" 2>&1; rc=$?; t "build rc=$rc"; [ $rc = 0 ] || ok=0
grep -E "error|warning" "$O/build.log" | head -20 >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu --gtest_brief=1 > "$O/tests.log" 2>&1; rc=$?
t "all GPU tests rc=$rc $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu_torch --gtest_filter='LayerTorch*' > "$O/tests_torch.log" 2>&1; rc=$?
t "LayerTorch tests rc=$rc $(grep -E 'PASSED|FAILED' "$O/tests_torch.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
timeout 90 build/release/tests/test_harness_gpu > "$O/harness_selftest.log" 2>&1; rc=$?
t "harness self-test rc=$rc $(grep -E 'PASSED|FAILED' "$O/harness_selftest.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
if [ $ok = 1 ]; then
  left=$(( 590 - ($(date +%s) - start) ))
  BENCHES="bench_rmsnorm bench_e2e" REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
    SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite1.log" 2>&1
  t "run_suite part 1 rc=$?"
  mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
else
  t "NOT RUN: part 1 (a check above failed)"
fi
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite1.log" 2>/dev/null; tail -3 "$O/suite1.log" 2>/dev/null
grep -E "FAILED|Failure" "$O/tests_torch.log" | head
grep -E "^spin|^clock|^copy|^H200" "$O/harness_selftest.log" | head
cd "$OUT" && tar czf o207.tgz o207 && rm -rf o207
