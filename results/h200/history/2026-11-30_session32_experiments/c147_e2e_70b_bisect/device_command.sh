#!/usr/bin/env bash
# Session 32, c147: bench_e2e, second pass. The smoke set (fp16, bf16), then a bisection of the NaN c146 found
# in the 70B layers' references (which of hidden 8192, 64 q heads, ffn 28672), one repetition each.
set -u
O=$OUT/o147; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c147.sh "$O/device_command.sh"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 300 cmake --build build/release -j 16 --target bench_e2e > "$O/build.log" 2>&1; t "build rc=$?"
grep -E "error" "$O/build.log" | head -30 >> "$O/exp.txt"
B=build/release/bench/bench_e2e
timeout 90 $B --shapes=smoke --dtypes=fp16,bf16 --benchmark_min_time=0.001 --benchmark_repetitions=1 > "$O/smoke.log" 2>&1; t "smoke rc=$?"
for s in h8192_hq64_hkv8_d128_f28672_b1_q1_kv64 h4096_hq64_hkv8_d128_f14336_b1_q1_kv64 h8192_hq32_hkv8_d128_f14336_b1_q1_kv64 \
         h4096_hq32_hkv8_d128_f28672_b1_q1_kv64 h4096_hq32_hkv8_d128_f14336_b1_q1_kv64 h1024_hq64_hkv8_d128_f2048_b1_q1_kv64 \
         h1024_hq16_hkv8_d128_f2048_b1_q1_kv64 h1024_hq32_hkv8_d128_f2048_b1_q1_kv64; do
  timeout 60 $B --shapes=$s --dtypes=bf16 --benchmark_filter='solbench|torch_eager.*cold' --benchmark_min_time=0.001 --benchmark_repetitions=1 > "$O/bisect_$s.log" 2>&1
  echo "$s rc=$? $(grep -E 'FAILED e2e|verification' "$O/bisect_$s.log" | head -1 | cut -c1-260)" >> "$O/exp.txt"
done
cat "$O/exp.txt"; grep -E "FAILED|bench_e2e:" "$O/smoke.log" | head
cd "$OUT" && tar czf o147.tgz o147 && rm -rf o147
