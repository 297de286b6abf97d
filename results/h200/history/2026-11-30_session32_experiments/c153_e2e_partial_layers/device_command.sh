#!/usr/bin/env bash
# Session 32, c153: 4d93b0ca57449cfdef037f52c61051401f01ee7e, bench_e2e alone with the two partial layers
# (solbench_norms, solbench_attention): the smoke set (fp16, bf16) through ctest, then the default set in bf16,
# 3 repetitions, cold and hot. Not a full run: it says what each of our kernels buys inside the layer.
set -u
O=$OUT/o153; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c153.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && SOLBENCH_GIT_COMMIT=4d93b0ca57449cfdef037f52c61051401f01ee7e timeout 300 cmake --build build/release -j 16 --target bench_e2e > "$O/build.log" 2>&1; t "build rc=$?"
B=build/release/bench/bench_e2e
timeout 90 $B --shapes=smoke --dtypes=fp16,bf16 --benchmark_min_time=0.001 --benchmark_repetitions=1 > "$O/smoke.log" 2>&1; t "smoke rc=$?"
SOLBENCH_GIT_COMMIT=4d93b0ca57449cfdef037f52c61051401f01ee7e timeout 400 $B --shapes=default --dtypes=bf16 --benchmark_repetitions=3 \
  --benchmark_display_aggregates_only=true --benchmark_out="$O/bench_e2e.json" --benchmark_out_format=json > "$O/default.log" 2>&1; t "default rc=$?"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "FAILED" "$O/smoke.log" "$O/default.log" | head -5
cd "$OUT" && tar czf o153.tgz o153 && rm -rf o153
