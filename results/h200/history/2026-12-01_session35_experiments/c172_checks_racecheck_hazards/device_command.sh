#!/usr/bin/env bash
# Session 35, c172: 4dbd756 (wgmma_flash persistent blocks at short causal D 64): its GPU tests, memcheck and
# racecheck, the prefill set against tiled_flash and cuDNN (one pass), bench_e2e's smoke ctest and memcheck; then, only
# if all of that passed, part 1 of the full bf16 run (bench_rmsnorm and bench_e2e).
set -u
O=$OUT/o172; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c172.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
ok=1
rm -rf results/h200/logs
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 300 cmake --build build/release -j 16 > "$O/build.log" 2>&1; rc=$?; t "build rc=$rc"; [ $rc = 0 ] || ok=0
grep -E "error|warning" "$O/build.log" | head -20 >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu --gtest_filter='*TiledFlash*:*wgmma_flash*:Attention*:WgmmaFlash*' > "$O/tests.log" 2>&1; rc=$?
t "tests rc=$rc $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"; [ $rc = 0 ] || ok=0
SOLBENCH_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 build/release/tests/test_gpu --gtest_filter='*wgmma_flash*' > "$O/memcheck.log" 2>&1 &
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout 170 compute-sanitizer --tool racecheck --error-exitcode 1 build/release/tests/test_gpu --gtest_filter='*MatchesReference*wgmma_flash*' > "$O/racecheck_$k.log" 2>&1 &
done
wait
t "memcheck $(grep -E 'ERROR SUMMARY' "$O/memcheck.log" | tail -1) $(grep -cE '^\[       OK' "$O/memcheck.log") ok"
grep -q 'ERROR SUMMARY: 0 errors' "$O/memcheck.log" || ok=0
for k in 0 1 2 3; do t "racecheck $k $(grep -E 'RACECHECK SUMMARY' "$O/racecheck_$k.log" | tail -1) $(grep -cE '^\[       OK' "$O/racecheck_$k.log") ok"; grep -q 'RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)' "$O/racecheck_$k.log" || ok=0; done
timeout 90 build/release/bench/bench_attention --shapes=prefill --dtypes=bf16 \
  --benchmark_filter='^attention/(tiled_flash|wgmma_flash|torch_sdpa_cudnn)/bf16/prefill/.*/cold' \
  --benchmark_out="$O/prefill.json" --benchmark_out_format=json > "$O/prefill.txt" 2>&1; t "prefill bench rc=$?"
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
grep -E "wgmma_flash|cudnn|tiled_flash" "$O/prefill.txt" | awk '{print $1, $2}' | sed 's|attention/||; s|/bf16/prefill/| |; s|/cold||'
cd "$OUT" && tar czf o172.tgz o172 && rm -rf o172
