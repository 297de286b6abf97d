#!/usr/bin/env bash
# Session 40, c201: a second interleaved pass on the H200 of c199 and c200 (after c200, registered), to see how far two interleaved
# passes of the same cases differ. bench_attention's 30 prefill shapes, bf16, 3 repetitions, every variant and SDPA backend, cold and
# hot, under the new default (protocol v58: the repetitions of all cases in random order; no flag given).
set -u
O=$OUT/o201; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c201.sh "$O/device_command.sh"
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
nvidia-smi -q -d PERFORMANCE > "$O/perf_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
  > "$O/configure.log" 2>&1 && timeout 240 cmake --build build/release -j 16 --target bench_attention > "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
timeout 470 build/release/bench/bench_attention --shapes=prefill --dtypes=bf16 --benchmark_repetitions=3 \
  --benchmark_out="$O/interleaved_b3.json" --benchmark_out_format=json > "$O/interleaved_b3.log" 2>&1
echo "interleaved B3 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
nvidia-smi -q -d PERFORMANCE > "$O/perf_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt" "$O/gpu_end.txt"; grep -c FAILED "$O/interleaved_b3.log"; tail -2 "$O/interleaved_b3.log" | cut -c1-200
gzip "$O/interleaved_b3.json" "$O/interleaved_b3.log" "$O/smoke.log" 2>/dev/null
cd "$OUT" && tar czf o201.tgz o201 && rm -rf o201
