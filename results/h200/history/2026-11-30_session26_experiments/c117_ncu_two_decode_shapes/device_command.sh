#!/usr/bin/env bash
# Session 26, c117: the two decode shapes still below cuDNN in b2657aa's run (GQA b16 KV 32768 0.992, the
# tensor-core kernel; MHA b256 KV 1024 0.994, the FMA kernel): time both beside cuDNN on this GPU, then
# Nsight Compute's full section set for ours and cuDNN's kernel at each (--profile, caches flushed).
set -u
O=$OUT/o117; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c117.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 150 cmake --build build/release -j 16 --target bench_attention > "$O/build.log" 2>&1; t "build rc=$?"
timeout 40 build/release/bench/bench_attention --shapes=b16_hq32_hkv8_d128_q1_kv32768,b256_hq32_hkv32_d128_q1_kv1024 --dtypes=bf16 \
  --benchmark_filter='(decode_splitk|torch_sdpa_cudnn)/.*cold' --benchmark_repetitions=3 --benchmark_display_aggregates_only=true \
  --benchmark_out="$O/decode.json" --benchmark_out_format=json > "$O/decode.log" 2>&1; t "bench rc=$?"
for s in b16_hq32_hkv8_d128_q1_kv32768 b256_hq32_hkv32_d128_q1_kv1024; do
  timeout 120 ncu --clock-control none --cache-control all -k 'regex:^split_kernel(_tc)?$|cudnn_generated' --set full --csv --page raw \
    build/release/bench/bench_attention --profile --shapes=$s --dtypes=bf16 \
    --benchmark_filter='(decode_splitk|torch_sdpa_cudnn)/bf16/.*/cold' > "$O/ncu_$s.csv" 2> "$O/ncu_$s.err"; t "ncu $s rc=$?"
  gzip -9 "$O/ncu_$s.csv"
done
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -h "_median" "$O/decode.log" | cut -c1-110; tail -2 "$O"/ncu_*.err; ls -la "$O"
cd "$OUT" && tar czf o117.tgz o117 && rm -rf o117
