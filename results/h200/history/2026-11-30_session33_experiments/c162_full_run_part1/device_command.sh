#!/usr/bin/env bash
# Session 33, c162: 42c577b5157d061ae1ada2a4a86cbed243775b58, part 1 of the full bf16 run (bench_rmsnorm and the new bench_e2e). Before it, in the
# same Release build (with libtorch): bench_e2e's ctest smoke run and CLI tests, and compute-sanitizer memcheck
# over its smoke set in --profile mode (vectorized, decode_splitk and wgmma_flash inside PyTorch's layer).
set -u
O=$OUT/o162; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c162.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf results/h200/logs
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && SOLBENCH_GIT_COMMIT=42c577b5157d061ae1ada2a4a86cbed243775b58 timeout 300 cmake --build build/release -j 16 > "$O/build.log" 2>&1; t "build rc=$?"
SOLBENCH_REQUIRE_GPU=1 timeout 120 ctest --test-dir build/release -R 'bench_e2e_smoke|bench_cli' --output-on-failure > "$O/ctest_e2e.log" 2>&1
t "ctest e2e rc=$? $(grep -E 'tests passed|tests failed' "$O/ctest_e2e.log")"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 build/release/bench/bench_e2e --shapes=smoke --dtypes=fp16,bf16 --profile > "$O/memcheck_e2e_smoke.log" 2>&1
t "memcheck e2e rc=$? $(grep -E 'ERROR SUMMARY' "$O/memcheck_e2e_smoke.log" | tail -1)"
left=$(( 585 - ($(date +%s) - start) ))
SOLBENCH_GIT_COMMIT=42c577b5157d061ae1ada2a4a86cbed243775b58 BENCHES="bench_rmsnorm bench_e2e" REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite1.log" 2>&1
t "run_suite part 1 rc=$?"
mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite1.log"; tail -3 "$O/suite1.log"
cd "$OUT" && tar czf o162.tgz o162 && rm -rf o162
