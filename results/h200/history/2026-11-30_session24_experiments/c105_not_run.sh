#!/usr/bin/env bash
# Session 24, call 11: protocol v26 (the persisting-line reset before each cold flush) on the GPU: the
# harness GPU tests (the rewritten HarnessGpu.FlushEvictsLinesMarkedEvictLast among them), then
# bench_rmsnorm at 2048^2 and 256 x 4096 (vectorized, the copies, the floor) with the reset on and off.
set -u
O=$OUT/o105; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c105.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf build/ci
(cmake --preset ci > "$O/configure.log" 2>&1 && timeout 100 cmake --build build/ci --target test_harness_gpu bench_rmsnorm > "$O/build.log" 2>&1) \
  || { echo "build failed" >> "$O/exp.txt"; tail -30 "$O/build.log"; }
echo "built at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
timeout 60 build/ci/tests/test_harness_gpu > "$O/test_harness_gpu.log" 2>&1; echo "test_harness_gpu rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for r in on off; do
  SOLBENCH_PERSISTING_RESET=$r timeout 30 build/ci/bench/bench_rmsnorm --shapes=2048x2048,256x4096 --dtypes=bf16 \
    --benchmark_filter='(vectorized|ref_copy|floor).*cold' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out="$O/rms_reset_$r.json" --benchmark_out_format=json > "$O/rms_reset_$r.log" 2>&1
  echo "bench reset $r rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "^\[ +(OK|FAILED|RUN|SKIPPED|PASSED) |flush |Failure|Expected|Which is|error" "$O/test_harness_gpu.log" | head -40
grep -h "_median" "$O"/rms_reset_*.log | cut -c1-110
python3 -c "import json;c=json.load(open('$O/rms_reset_on.json'))['context'];print({k:c.get(k) for k in ('timing_protocol','persisting_reset','persisting_l2_bytes')})"
cd "$OUT" && tar czf o105.tgz o105 && rm -rf o105
