#!/usr/bin/env bash
# Session 65, c317: is decode_splitk slow at 64 q heads on 8 kv heads? In 25e77d7's run our attention alone in
# PyTorch's Llama-3-70B decode layer (b1, KV 32768) read 0.953x SDPA's choice (cuDNN), ~25 us more, while the 8B
# layer's (32 q heads) read 1.014x. The plan is the same for both (8 units, 16 splits, tensor cores). Prediction:
# standalone, b1_hq64_hkv8 KV 32768 reads within 5% of b1_hq32_hkv8 KV 32768's 46.9 us (same K and V bytes);
# if so the layer's gap is not the kernel. Cold, bf16, 3 repetitions, with the split sweep; then the 70B layer.
set -u
O=$OUT/o317; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c317.sh "$O/device_command.sh"; git rev-parse HEAD > "$O/sha.txt" 2>/dev/null || cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 150 cmake --build build/release -j 16 --target bench_attention bench_e2e > "$O/build.log" 2>&1; t "build rc=$?"
S=b1_hq64_hkv8_d128_q1_kv32768,b1_hq32_hkv8_d128_q1_kv32768
timeout 110 build/release/bench/bench_attention --shapes=$S --dtypes=bf16 --split-sweep=all \
  --benchmark_filter='(decode_splitk|decode_splitk_s[0-9]+|torch_sdpa_cudnn|torch_sdpa_flash|ref_kv_read)/bf16/decode/.*/cold' \
  --benchmark_repetitions=3 --benchmark_display_aggregates_only=true \
  --benchmark_out="$O/attention.json" --benchmark_out_format=json > "$O/attention.log" 2>&1; t "bench_attention rc=$?"
grep -E "_median" "$O/attention.log" | awk '{print $1, $2, $3}' >> "$O/exp.txt"
left=$(( 185 - ($(date +%s) - start) ))
[ $left -gt 20 ] && timeout $left build/release/bench/bench_e2e --dtypes=bf16 \
  --benchmark_filter='e2e/.*/bf16/decode/h8192_hq64_hkv8_d128_f28672_b1_q1_kv32768/cold' \
  --benchmark_repetitions=3 --benchmark_display_aggregates_only=true \
  --benchmark_out="$O/e2e.json" --benchmark_out_format=json > "$O/e2e.log" 2>&1; t "bench_e2e rc=$?"
grep -E "_median" "$O/e2e.log" | awk '{print $1, $2, $3}' >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt"; tail -5 "$O/attention.log"; tail -5 "$O/e2e.log" 2>/dev/null; grep -B2 -A8 "error" "$O/build.log" | head -30
gzip -9 -n "$O/build.log" 2>/dev/null
cd "$OUT" && tar czf o317.tgz o317 && rm -rf o317
