#!/usr/bin/env bash
# Session 45, c220: 7a15934 on the H200: the Release build with libtorch (bench_e2e's data_for/layer_for change was
# only syntax-checked), test_cpu, test_harness_cpu, the harness GPU self-tests (HotMarginalTimeLeavesOutTheGraphsOwnLaunch
# has never run), test_gpu, LayerTorch, bench_e2e's smoke set; then the hot decode-sized rows and the floors under
# SOLBENCH_HOT_TIMING=graph and =marginal, alternating, 5 repetitions each: does marginal remove the K dependence?
set -u
O=$OUT/o220; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c220.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 300 cmake --build build/release -j 16 > "$O/build.log" 2>&1; rc=$?; t "build rc=$rc"
grep -E "error|warning" "$O/build.log" | head -20 >> "$O/exp.txt"
build/release/tests/test_cpu --gtest_brief=1 > "$O/test_cpu.log" 2>&1; t "test_cpu rc=$? $(grep -E 'PASSED|FAILED' "$O/test_cpu.log" | tail -2 | tr '\n' ' ')"
build/release/tests/test_harness_cpu --gtest_brief=1 > "$O/test_harness_cpu.log" 2>&1; t "test_harness_cpu rc=$? $(grep -E 'PASSED|FAILED' "$O/test_harness_cpu.log" | tail -2 | tr '\n' ' ')"
for i in 1 2 3; do
  timeout 90 build/release/tests/test_harness_gpu > "$O/harness_selftest_$i.log" 2>&1; t "harness self-test $i rc=$? $(grep -E 'PASSED|FAILED' "$O/harness_selftest_$i.log" | tail -2 | tr '\n' ' ')"
  grep "hot, us a launch" "$O/harness_selftest_$i.log" >> "$O/exp.txt"
done
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu --gtest_brief=1 > "$O/tests.log" 2>&1; t "test_gpu rc=$? $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu_torch --gtest_filter='LayerTorch*' > "$O/tests_torch.log" 2>&1; t "LayerTorch rc=$? $(grep -E 'PASSED|FAILED' "$O/tests_torch.log" | tail -2 | tr '\n' ' ')"
timeout 120 build/release/bench/bench_e2e --shapes=smoke --dtypes=bf16,fp16 --benchmark_out="$O/bench_e2e_smoke.json" --benchmark_out_format=json > "$O/bench_e2e_smoke.log" 2>&1
t "bench_e2e smoke rc=$? $(tail -1 "$O/bench_e2e_smoke.log")"
mkdir -p "$O/ab"
f='^(floor/empty_kernel(_pdl)?/hot|rmsnorm/(vectorized|ref_copy|torch_rms_norm)/bf16/t(1_h4096|64_h8192)/hot)/'
for timing in graph marginal graph marginal graph marginal; do
  left=$(( 580 - ($(date +%s) - start) ))
  [ $left -gt 40 ] || { t "NOT RUN: $timing ($left s left)"; break; }
  n=$(ls "$O/ab" | wc -l)
  SOLBENCH_HOT_TIMING=$timing timeout $left build/release/bench/bench_rmsnorm --benchmark_filter="$f" --benchmark_repetitions=5 \
    --benchmark_out="$O/ab/${n}_$timing.json" --benchmark_out_format=json > "$O/ab/${n}_$timing.log" 2>&1
  t "hot timing $timing rc=$?"
done
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"
grep -E "FAILED|Failure|error" "$O"/harness_selftest_*.log "$O/tests_torch.log" "$O/test_cpu.log" 2>/dev/null | head
grep -B2 -A10 "error" "$O/build.log" | head -60
for f in "$O"/ab/*.json; do python3 - "$f" <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
print(sys.argv[1].split('/')[-1], d['context'].get('timing_protocol','')[:5], d['context'].get('hot_timing',''))
for b in d['benchmarks']:
    if b.get('aggregate_name')=='median': print(f"  {b['run_name']:50s} {b['real_time']:.3f} {b['time_unit']} K={b.get('launches')}")
PY
done
cd "$OUT" && tar czf o220.tgz o220 && rm -rf o220
