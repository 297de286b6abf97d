#!/usr/bin/env bash
# Session 54, c260: on one machine, the K/V read-order probe (with stream_s3, the FMA kernel's residency), then
# bench_attention's decode_splitk, ref_kv_read and SDPA cuDNN at the probe's six shapes (bf16, cold, 3 repetitions,
# the harness's protocol), then the probe again: how far decode_splitk is from a plain cp.async stream of its bytes.
set -u
O=$OUT/o260; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c260.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
D=results/h200/history/2026-12-02_session54_experiments
nvcc -O3 -arch=sm_90a -o /tmp/kvp $D/kv_read_patterns.cu > "$O/probe_build.log" 2>&1; t "probe build rc=$?"
timeout 100 /tmp/kvp 30 3 > "$O/probe1.csv" 2> "$O/probe1.err"; t "probe1 rc=$?"
B=build/rel
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/build.log" 2>&1 &&
  cmake --build $B -j 16 --target bench_attention >> "$O/build.log" 2>&1; t "build rc=$?"
F='^attention/(decode_splitk|ref_kv_read|torch_sdpa_cudnn)/bf16/decode/(b16_hq32_hkv8_d128_q1_kv32768|b256_hq32_hkv32_d128_q1_kv1024|b64_hq32_hkv32_d128_q1_kv4096|b64_hq32_hkv8_d128_q1_kv16384|b256_hq32_hkv8_d128_q1_kv4096|b16_hq32_hkv32_d128_q1_kv8192)/cold'
timeout 300 $B/bench/bench_attention --shapes=decode --dtypes=bf16 --benchmark_filter="$F" --benchmark_repetitions=3 \
  --benchmark_display_aggregates_only=true --benchmark_out="$O/bench.json" --benchmark_out_format=json > "$O/bench.log" 2>&1; t "bench rc=$?"
timeout 100 /tmp/kvp 30 3 > "$O/probe2.csv" 2> "$O/probe2.err"; t "probe2 rc=$?"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
gzip -9 -n "$O/build.log"
cat "$O/exp.txt" "$O/gpu_start.txt" "$O/probe1.err" "$O/probe2.err"; grep -E "median" "$O/bench.log" | head -40; tail -5 "$O/bench.log"
