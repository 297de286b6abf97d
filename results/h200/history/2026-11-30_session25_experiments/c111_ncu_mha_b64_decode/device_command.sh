#!/usr/bin/env bash
# Session 25, call 6: why does decode_splitk trail cuDNN by ~5% at MHA b64 on some H200s (0.95 on
# GPU-89ae91f2 and GPU-ee102b7c, 0.997 on GPU-34f7f545)? Time both at b64 KV 4096 and 16384 on this GPU,
# then Nsight Compute's full section set for both kernels at KV 4096 (--profile: 3 launches each).
set -u
O=$OUT/o111; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c111.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 150 cmake --build build/release -j 16 > "$O/build.log" 2>&1; t "build rc=$?"
timeout 60 build/release/bench/bench_attention --shapes=b64_hq32_hkv32_d128_q1_kv4096,b64_hq32_hkv32_d128_q1_kv16384 --dtypes=bf16 \
  --benchmark_filter='(decode_splitk|torch_sdpa_cudnn)/.*cold' --benchmark_repetitions=3 --benchmark_display_aggregates_only=true \
  --benchmark_out="$O/decode.json" --benchmark_out_format=json > "$O/decode.log" 2>&1; t "bench rc=$?"
timeout 120 ncu --clock-control none --cache-control all -k 'regex:^split_kernel$|cudnn_generated' --set full --csv --page raw \
  build/release/bench/bench_attention --profile --shapes=b64_hq32_hkv32_d128_q1_kv4096 --dtypes=bf16 \
  --benchmark_filter='(decode_splitk|torch_sdpa_cudnn)/bf16/.*/cold' > "$O/ncu_full.csv" 2> "$O/ncu.err"; t "ncu rc=$?"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -h "_median" "$O/decode.log" | cut -c1-110; tail -3 "$O/ncu.err"; wc -c "$O/ncu_full.csv"
cd "$OUT" && tar czf o111.tgz o111 && rm -rf o111
