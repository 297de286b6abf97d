#!/usr/bin/env bash
# Session 25, call 1: protocol v26 on the GPU. Build (Release, as gpu_run.sh does), the harness GPU tests
# (the rewritten HarnessGpu.FlushEvictsLinesMarkedEvictLast among them), bench_rmsnorm at 2048^2 and
# 256 x 4096 with the persisting-line reset on and off, then part 1 of the full bf16 run of dcba5c5ef8563c74a5374d183680d2ff3875a09a:
# bench_rmsnorm (BENCHES=bench_rmsnorm; part 2, bench_attention and the cross-check, is the next call).
set -u
O=$OUT/o106; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c106.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf results/h200/logs
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 250 cmake --build build/release -j 16 > "$O/build.log" 2>&1; t "build rc=$?"
timeout 120 build/release/tests/test_harness_gpu > "$O/test_harness_gpu.log" 2>&1; t "test_harness_gpu rc=$?"
for r in on off; do
  SOLBENCH_PERSISTING_RESET=$r timeout 40 build/release/bench/bench_rmsnorm --shapes=2048x2048,256x4096 --dtypes=bf16 \
    --benchmark_filter='(vectorized|ref_copy|floor|torch_rms_norm).*cold' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out="$O/rms_reset_$r.json" --benchmark_out_format=json > "$O/rms_reset_$r.log" 2>&1
  t "bench reset $r rc=$?"
done
left=$(( 585 - ($(date +%s) - start) ))
SOLBENCH_GIT_COMMIT=dcba5c5ef8563c74a5374d183680d2ff3875a09a BENCHES=bench_rmsnorm REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite1.log" 2>&1
t "run_suite part 1 rc=$? (limit $left s)"
mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
cat "$O/exp.txt" "$O/gpu_start.txt"
grep -E "^\[ +(OK|FAILED|PASSED) |Failure|Expected|Which is" "$O/test_harness_gpu.log" | head -40
grep -h "_median" "$O"/rms_reset_*.log | cut -c1-120
cd "$OUT" && tar czf o106.tgz o106 && rm -rf o106
