#!/usr/bin/env bash
# Session 40, c200 (registered, after c199 on the same H200: pairs with its interleaved pass; --benchmark_enable_random_interleaving=false gives the order of protocol v26): bench_attention's 30 prefill shapes, bf16, 3 repetitions, every variant
# and SDPA backend, cold and hot, in the registered order (as the full run). c198 runs the same with Google Benchmark's
# --benchmark_enable_random_interleaving=true, c199 registered again. Question (experiments/README.md, session 39): does
# the registered order hold wgmma_flash's D 128 cold cases at a lower SM clock than cuDNN's, and so its ratios low?
set -u
O=$OUT/o200; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c200.sh "$O/device_command.sh"
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
nvidia-smi -q -d PERFORMANCE > "$O/perf_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
  > "$O/configure.log" 2>&1 && timeout 240 cmake --build build/release -j 16 --target bench_attention > "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
timeout 450 build/release/bench/bench_attention --shapes=prefill --dtypes=bf16 --benchmark_repetitions=3 --benchmark_enable_random_interleaving=false \
  --benchmark_out="$O/registered_a2.json" --benchmark_out_format=json > "$O/registered_a2.log" 2>&1
echo "registered A2 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
nvidia-smi -q -d PERFORMANCE > "$O/perf_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt" "$O/gpu_end.txt"; grep -c FAILED "$O/registered_a2.log"; tail -2 "$O/registered_a2.log"
gzip "$O/registered_a2.json" "$O/registered_a2.log"
cd "$OUT" && tar czf o200.tgz o200 && rm -rf o200
