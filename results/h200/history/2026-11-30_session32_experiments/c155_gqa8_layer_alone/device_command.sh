#!/usr/bin/env bash
# Session 32, c155: 4d93b0ca57449cfdef037f52c61051401f01ee7e. c153 put our attention inside Llama-3-70B's decode
# layer (b1 KV 32768) ~16 us behind cuDNN's, where alone (c154, another H200) it was 1 us ahead: both on one H200,
# in one command, two passes: bench_attention at that attention shape, then bench_e2e at that layer.
set -u
O=$OUT/o155; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c155.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && SOLBENCH_GIT_COMMIT=4d93b0ca57449cfdef037f52c61051401f01ee7e timeout 300 cmake --build build/release -j 16 --target bench_attention bench_e2e > "$O/build.log" 2>&1; t "build rc=$?"
for p in 1 2; do
  timeout 100 build/release/bench/bench_attention --shapes=b1_hq64_hkv8_d128_q1_kv32768 --dtypes=bf16 \
    --benchmark_filter='attention/(decode_splitk|torch_sdpa_cudnn|ref_kv_read)/' --benchmark_repetitions=3 \
    --benchmark_display_aggregates_only=true --benchmark_out="$O/attention_$p.json" --benchmark_out_format=json > "$O/attention_$p.log" 2>&1; t "attention pass $p rc=$?"
  timeout 150 build/release/bench/bench_e2e --shapes=h8192_hq64_hkv8_d128_f28672_b1_q1_kv32768 --dtypes=bf16 \
    --benchmark_filter='e2e/(solbench|solbench_attention|solbench_norms|torch_eager|ref_rest_of_layer)/' --benchmark_repetitions=3 \
    --benchmark_display_aggregates_only=true --benchmark_out="$O/e2e_$p.json" --benchmark_out_format=json > "$O/e2e_$p.log" 2>&1; t "e2e pass $p rc=$?"
done
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -h "_median" "$O"/attention_*.log "$O"/e2e_*.log | cut -c1-120
cd "$OUT" && tar czf o155.tgz o155 && rm -rf o155
