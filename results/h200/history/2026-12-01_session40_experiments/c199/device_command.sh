#!/usr/bin/env bash
# Session 40, c199: pass B again, complete, with the harness fixed (c198 aborted in Google Benchmark: a case skipped in one
# repetition only). bench_attention's 30 prefill shapes, bf16, 3 repetitions, every variant and SDPA backend, cold and
# hot, under the new default (protocol v58: the repetitions of all cases in random order; no flag given). Then the
# smoke ctests (2 repetitions each, interleaved) of bench_attention and bench_rmsnorm.
set -u
O=$OUT/o199; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c199.sh "$O/device_command.sh"
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
nvidia-smi -q -d PERFORMANCE > "$O/perf_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
  > "$O/configure.log" 2>&1 && timeout 240 cmake --build build/release -j 16 --target bench_attention > "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
timeout 470 build/release/bench/bench_attention --shapes=prefill --dtypes=bf16 --benchmark_repetitions=3 \
  --benchmark_out="$O/interleaved_b2.json" --benchmark_out_format=json > "$O/interleaved_b2.log" 2>&1
echo "interleaved B2 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
nvidia-smi -q -d PERFORMANCE > "$O/perf_end.txt" 2>&1
left=$(( 585 - ($(date +%s) - start) ))
if [ $left -gt 60 ]; then
  timeout $((left - 5)) bash -c 'cmake --build build/release -j 16 --target bench_rmsnorm > "$0/build2.log" 2>&1 &&
    SOLBENCH_REQUIRE_GPU=1 ctest --test-dir build/release -R "bench_(attention|rmsnorm)_smoke" --output-on-failure > "$0/smoke.log" 2>&1' "$O"
  echo "smoke rc=$? at $(( $(date +%s) - start )) s $(grep -E 'tests passed|tests failed' "$O/smoke.log" 2>/dev/null)" >> "$O/exp.txt"
fi
cat "$O/exp.txt" "$O/gpu_start.txt" "$O/gpu_end.txt"; grep -c FAILED "$O/interleaved_b2.log"; tail -2 "$O/interleaved_b2.log" | cut -c1-200
gzip "$O/interleaved_b2.json" "$O/interleaved_b2.log" "$O/smoke.log" 2>/dev/null
cd "$OUT" && tar czf o199.tgz o199 && rm -rf o199
