#!/usr/bin/env bash
# Session 32, c150: bench_e2e with the layer built on the suite's stream: smoke, and the default set (bf16, one repetition).
# in the 70B layers' references (which of hidden 8192, 64 q heads, ffn 28672), one repetition each.
set -u
O=$OUT/o150; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c150.sh "$O/device_command.sh"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 300 cmake --build build/release -j 16 --target bench_e2e > "$O/build.log" 2>&1; t "build rc=$?"
grep -E "error" "$O/build.log" | head -30 >> "$O/exp.txt"
B=build/release/bench/bench_e2e
timeout 90 $B --shapes=smoke --dtypes=fp16,bf16 --benchmark_min_time=0.001 --benchmark_repetitions=1 > "$O/smoke.log" 2>&1; t "smoke rc=$?"
timeout 300 $B --shapes=default --dtypes=bf16 --benchmark_repetitions=1 --benchmark_out="$O/default.json" --benchmark_out_format=json > "$O/default.log" 2>&1; t "default rc=$?"
grep -E "FAILED" "$O/default.log" | head -5 | cut -c1-300 >> "$O/exp.txt"
cat "$O/exp.txt"; grep -E "FAILED|bench_e2e:" "$O/smoke.log" | head
cd "$OUT" && tar czf o150.tgz o150 && rm -rf o150
