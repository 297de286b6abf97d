#!/usr/bin/env bash
# Session 32, c146: bench_e2e's first GPU run (uncommitted tree on top of d21474e). Build (Release, with
# libtorch); the smoke set in fp16 and bf16 (verification of every layer implementation); the default
# decode and prefill sets in bf16, one repetition; compute-sanitizer memcheck over the bf16 smoke in
# --profile mode (our kernels inside PyTorch's layer).
set -u
O=$OUT/o146; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c146.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 300 cmake --build build/release -j 16 --target bench_e2e > "$O/build.log" 2>&1; t "build rc=$?"
grep -E "error|Error" "$O/build.log" | head -30 >> "$O/exp.txt"
B=build/release/bench/bench_e2e
timeout 90 $B --shapes=smoke --dtypes=fp16,bf16 --benchmark_min_time=0.001 --benchmark_repetitions=1 > "$O/smoke.log" 2>&1; t "smoke rc=$?"
timeout 300 $B --shapes=default --dtypes=bf16 --benchmark_repetitions=1 --benchmark_out="$O/default.json" --benchmark_out_format=json > "$O/default.log" 2>&1; t "default rc=$?"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B --shapes=smoke --dtypes=bf16 --profile > "$O/memcheck_smoke.log" 2>&1; t "memcheck rc=$? $(grep -E 'ERROR SUMMARY' "$O/memcheck_smoke.log" | tail -1)"
cat "$O/exp.txt"; tail -30 "$O/smoke.log"; grep -E "e2e/" "$O/default.log" | cut -c1-150 | head -80
cd "$OUT" && tar czf o146.tgz o146 && rm -rf o146
