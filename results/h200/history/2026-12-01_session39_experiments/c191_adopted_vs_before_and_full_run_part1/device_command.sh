#!/usr/bin/env bash
# Session 39, c191: wgmma_flash with the dead halves (session 38's =2, adopted in 503b488) against the kernel before it
# (.devcall/s/before_dead_halves.patch restores it, its tests and common/device.h), the 30 prefill shapes bf16 cold, two
# passes; the adopted kernel's tests, memcheck and racecheck; every GPU test of a release build; bench_e2e's smoke ctest
# and memcheck; then, only if all of that passed, part 1 of the full bf16 run (bench_rmsnorm and bench_e2e).
set -u
O=$OUT/o191; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c191.sh .devcall/s/before_dead_halves.patch "$O/"
mv "$O/c191.sh" "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
ok=1
PATCH=.devcall/s/before_dead_halves.patch TEST_FILTER='*TiledFlash*:WgmmaFlash*' \
  BENCH_FILTER='^attention/wgmma_flash/bf16/prefill/.*/cold' SHAPES=prefill \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS=default SANITIZE_FILTER='*wgmma_flash*' RACECHECK_FILTER='*MatchesReference*wgmma_flash*' \
  SANITIZE_TIMEOUT=200 timeout 340 scripts/gpu_experiments.sh "$O/exp" SB_WGMMA_FLASH_BEFORE_DEAD_HALVES=1 > "$O/experiments.txt" 2>&1
rc=$?; t "experiments rc=$rc"; [ $rc = 0 ] || ok=0
rm -rf results/h200/logs
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 200 cmake --build build/release -j 16 > "$O/build.log" 2>&1; rc=$?; t "build rc=$rc"; [ $rc = 0 ] || ok=0
grep -E "error|warning" "$O/build.log" | head -20 >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 150 build/release/tests/test_gpu --gtest_brief=1 > "$O/tests.log" 2>&1; rc=$?
t "all GPU tests rc=$rc $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
SOLBENCH_REQUIRE_GPU=1 timeout 120 ctest --test-dir build/release -R 'bench_e2e_smoke|bench_cli' --output-on-failure > "$O/ctest_e2e.log" 2>&1; rc=$?
t "ctest e2e rc=$rc $(grep -E 'tests passed|tests failed' "$O/ctest_e2e.log")"; [ $rc = 0 ] || ok=0
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 build/release/bench/bench_e2e --shapes=smoke --dtypes=fp16,bf16 --profile > "$O/memcheck_e2e_smoke.log" 2>&1; rc=$?
t "memcheck e2e rc=$rc $(grep -E 'ERROR SUMMARY' "$O/memcheck_e2e_smoke.log" | tail -1)"; [ $rc = 0 ] || ok=0
if [ $ok = 1 ]; then
  left=$(( 585 - ($(date +%s) - start) ))
  BENCHES="bench_rmsnorm bench_e2e" REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
    SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite1.log" 2>&1
  t "run_suite part 1 rc=$?"
  mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
else
  t "NOT RUN: part 1 (a check above failed)"
fi
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite1.log" 2>/dev/null; tail -3 "$O/suite1.log" 2>/dev/null
grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -v '^attention' | head -20
sed 's|attention/wgmma_flash/bf16/prefill/||; s|/cold||' "$O/exp/summary.txt" 2>/dev/null | grep SB_ | head -40
cd "$OUT" && tar czf o191.tgz o191 && rm -rf o191
