#!/usr/bin/env bash
# Session 32, c149: bench_e2e, the 70B NaN: an 8B layer then a 70B one in one process (hot cases in or out).
# in the 70B layers' references (which of hidden 8192, 64 q heads, ffn 28672), one repetition each.
set -u
O=$OUT/o149; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c149.sh "$O/device_command.sh"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 300 cmake --build build/release -j 16 --target bench_e2e > "$O/build.log" 2>&1; t "build rc=$?"
grep -E "error" "$O/build.log" | head -30 >> "$O/exp.txt"
B=build/release/bench/bench_e2e
S=h4096_hq32_hkv8_d128_f14336_b64_q1_kv16384,h8192_hq64_hkv8_d128_f28672_b1_q1_kv32768
for f in 'solbench|torch_eager' 'cold' 'torch_eager.*cold'; do
  timeout 120 $B --shapes=$S --dtypes=bf16 --benchmark_filter="$f" --benchmark_min_time=0.001 --benchmark_repetitions=1 > "$O/seq_${f//[^a-z]/_}.log" 2>&1
  echo "filter $f rc=$? $(grep -E 'FAILED e2e|verification' "$O/seq_${f//[^a-z]/_}.log" | head -2 | cut -c1-300)" >> "$O/exp.txt"
done
timeout 120 $B --shapes=h1024_hq64_hkv8_d128_f2048_b1_q1_kv64,h4096_hq32_hkv8_d128_f14336_b1_q1_kv64 --dtypes=bf16 --benchmark_filter=cold --benchmark_min_time=0.001 --benchmark_repetitions=1 > "$O/seq_small.log" 2>&1
echo "small seq rc=$? $(grep -E 'FAILED e2e|verification' "$O/seq_small.log" | head -2 | cut -c1-300)" >> "$O/exp.txt"
cat "$O/exp.txt"; grep -E "FAILED|bench_e2e:" "$O/smoke.log" | head
cd "$OUT" && tar czf o149.tgz o149 && rm -rf o149
