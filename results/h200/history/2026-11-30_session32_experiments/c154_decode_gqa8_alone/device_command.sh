#!/usr/bin/env bash
# Session 32, c154: 4d93b0ca57449cfdef037f52c61051401f01ee7e. c153 put our attention inside Llama-3-70B's decode
# layer at 0.972x of cuDNN's (b1 KV 32768): decode_splitk against SDPA cuDNN and ref_kv_read alone at the 70B
# decode shapes (64 q heads, 8 kv heads: a GQA group of 8, which no default decode shape has), cold, 3 repetitions.
set -u
O=$OUT/o154; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c154.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && SOLBENCH_GIT_COMMIT=4d93b0ca57449cfdef037f52c61051401f01ee7e timeout 300 cmake --build build/release -j 16 --target bench_attention > "$O/build.log" 2>&1; t "build rc=$?"
SOLBENCH_GIT_COMMIT=4d93b0ca57449cfdef037f52c61051401f01ee7e timeout 200 build/release/bench/bench_attention \
  --shapes=b1_hq64_hkv8_d128_q1_kv32768,b64_hq64_hkv8_d128_q1_kv4096,b1_hq64_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv32768 --dtypes=bf16 \
  --benchmark_filter='attention/(decode_splitk|torch_sdpa_cudnn|ref_kv_read)/.*/cold' --benchmark_repetitions=3 \
  --benchmark_display_aggregates_only=true --benchmark_out="$O/bench_attention.json" --benchmark_out_format=json > "$O/decode.log" 2>&1; t "decode rc=$?"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "_median" "$O/decode.log" | cut -c1-130
cd "$OUT" && tar czf o154.tgz o154 && rm -rf o154
