#!/usr/bin/env bash
# Session 47, c229: part 1 of a full bf16 run at c02506e (SOLBENCH_HOT_TIMING=net the default, protocol v378): the
# Release build with libtorch, test_cpu, test_harness_cpu, the CLI test, test_gpu, LayerTorch, the harness self-test
# (net's check now requires microsecond graphs' G resolved), then bench_rmsnorm and bench_e2e; then, while time is
# left, RMSNorm's hot rows of >= 25 us a launch (K = 2) and the decode-sized rows with the floors under
# SOLBENCH_HOT_TIMING=graph and net alternately, 5 repetitions each: does net add noise where G is a sliver?
set -u
O=$OUT/o229; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c229.sh "$O/device_command.sh"
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
  mkdir -p "$O/ab"
  f='^(floor/empty_kernel(_pdl)?/hot|rmsnorm/(vectorized|ref_copy|torch_rms_norm)/bf16/(t1_h4096|t64_h8192|t4096_h4096|t16384_h4096|t32768_h8192|t65536_h1024)/hot)/'
  for timing in graph net graph net graph net; do
    left=$(( 585 - ($(date +%s) - start) ))
    [ $left -gt 40 ] || { t "NOT RUN: $timing ($left s left)"; break; }
    n=$(ls "$O/ab" | wc -l)
    SOLBENCH_HOT_TIMING=$timing timeout $left build/release/bench/bench_rmsnorm --benchmark_filter="$f" --benchmark_repetitions=5 \
      --benchmark_out="$O/ab/${n}_$timing.json" --benchmark_out_format=json > "$O/ab/${n}_$timing.log" 2>&1
    t "hot timing $timing rc=$?"
  done
else
  t "NOT RUN: part 1 (a check above failed)"
fi
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite1.log" 2>/dev/null; tail -3 "$O/suite1.log" 2>/dev/null
grep -E "FAILED|Failure|error" "$O/tests_torch.log" "$O/test_cpu.log" "$O/bench_cli.log" 2>/dev/null | head
grep -B2 -A10 "error" "$O/build.log" | head -60
for f in "$O"/ab/*.json; do python3 - "$f" <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
print(sys.argv[1].split('/')[-1], d['context'].get('timing_protocol','')[:5], d['context'].get('hot_timing',''))
for b in d['benchmarks']:
    if b.get('aggregate_name') in ('median','cv'): print(f"  {b['run_name']:50s} {b['aggregate_name']:6s} {b['real_time']:.4g} K={b.get('launches')} G={b.get('graph_launch_us','')} off={b.get('graph_launch_off','')}")
PY
done
cd "$OUT" && tar czf o229.tgz o229 && rm -rf o229
