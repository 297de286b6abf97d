#!/usr/bin/env bash
# Session 39, c196: wgmma_flash against cuDNN cold over the 30 prefill shapes, bf16, 3 repetitions, with Google
# Benchmark's random interleaving of repetitions (the two kernels' cases in random order, not cuDNN's always five cases
# after ours as in the full run), to see whether the full run's cold ratios (0.833-1.091, ours held 1,433-1,679 MHz at
# D 128 from s2048 and cuDNN 1,679-1,931) depend on the order the cases run in.
set -u
O=$OUT/o196; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c196.sh "$O/device_command.sh"
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
nvidia-smi --query-gpu=uuid,clocks.sm,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
  > "$O/configure.log" 2>&1 && timeout 240 cmake --build build/release -j 16 --target bench_attention > "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
timeout 200 build/release/bench/bench_attention --shapes=prefill --dtypes=bf16 --benchmark_repetitions=3 \
  --benchmark_enable_random_interleaving=true --benchmark_filter='^attention/(wgmma_flash|torch_sdpa_cudnn)/bf16/prefill/.*/cold' \
  --benchmark_out="$O/interleaved.json" --benchmark_out_format=json > "$O/interleaved.log" 2>&1
echo "interleaved rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt" "$O/gpu_end.txt"; tail -3 "$O/interleaved.log"
cd "$OUT" && tar czf o196.tgz o196 && rm -rf o196
