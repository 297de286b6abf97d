#!/usr/bin/env bash
# Session 31, c139: bbb762032d0a850f459fcb3c5b4f4fe0659d1003 (ref_kv_read, the decode read reference).
# Build (Release); the new GPU tests (ref_kv_read's check, read_sum_kernel) and compute-sanitizer memcheck and
# racecheck over them; a smoke of ref_kv_read beside decode_splitk at two decode shapes; then part 1 of the
# full bf16 run (bench_rmsnorm).
set -u
O=$OUT/o139; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c139.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf results/h200/logs
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 250 cmake --build build/release -j 16 > "$O/build.log" 2>&1; t "build rc=$?"
T=build/release/tests/test_gpu; H=build/release/tests/test_harness_gpu
SOLBENCH_REQUIRE_GPU=1 timeout 60 $T --gtest_filter='*AttentionKvRead*' > "$O/tests.log" 2>&1; t "test_gpu rc=$? $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"
SOLBENCH_REQUIRE_GPU=1 timeout 60 $H --gtest_filter='*ReadSum*' > "$O/tests_harness.log" 2>&1; t "test_harness_gpu rc=$? $(grep -E 'PASSED|FAILED' "$O/tests_harness.log" | tail -2 | tr '\n' ' ')"
for tool in memcheck racecheck; do
  SOLBENCH_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='*AttentionKvRead*' > "$O/${tool}_kvread.log" 2>&1 &
  SOLBENCH_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $H --gtest_filter='*ReadSum*' > "$O/${tool}_readsum.log" 2>&1 &
done
wait
for f in "$O"/memcheck_*.log "$O"/racecheck_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'PASSED|FAILED' $f | tail -1)" >> "$O/exp.txt"; done
t "sanitizers done"
timeout 90 build/release/bench/bench_attention --shapes=b1_hq32_hkv8_d128_q1_kv4096,b16_hq32_hkv8_d128_q1_kv32768 --dtypes=bf16 \
  --benchmark_filter='attention/(ref_kv_read|decode_splitk|torch_sdpa_cudnn)/' --benchmark_repetitions=2 --benchmark_report_aggregates_only=true \
  --benchmark_out="$O/smoke.json" --benchmark_out_format=json > "$O/smoke.log" 2>&1; t "smoke rc=$?"
left=$(( 585 - ($(date +%s) - start) ))
SOLBENCH_GIT_COMMIT=bbb762032d0a850f459fcb3c5b4f4fe0659d1003 BENCHES=bench_rmsnorm REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite1.log" 2>&1
t "run_suite part 1 rc=$? (limit $left s)"
mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "median|FAILED" "$O/smoke.log" | head -20; grep "^== " "$O/suite1.log"; tail -3 "$O/suite1.log"
cd "$OUT" && tar czf o139.tgz o139 && rm -rf o139
