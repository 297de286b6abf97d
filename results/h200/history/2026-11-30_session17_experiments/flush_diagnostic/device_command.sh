#!/usr/bin/env bash
# Session 17, call 1: the harness's flush GPU tests; then the flush diagnostic (memset / read / evict-last
# alternated, two rounds) at four decode shapes and two RMSNorm shapes.
set -u
O=$OUT/o60; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c60.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake --preset release > "$O/build.log" 2>&1 && cmake --build --preset release --target test_harness_gpu bench_attention bench_rmsnorm >> "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_harness_gpu --gtest_filter='HarnessGpu.*Flush*:HarnessGpu.ColdAndHot*' > "$O/flush_tests.log" 2>&1
echo "flush tests rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for i in 1 2; do for m in memset read evict-last; do
  [ $(( $(date +%s) - start )) -gt 480 ] && break 2
  SOLBENCH_FLUSH_METHOD=$m timeout 120 build/release/bench/bench_attention --dtypes=bf16 --shapes=b1_hq32_hkv8_d128_q1_kv4096,b16_hq32_hkv8_d128_q1_kv8192,b16_hq32_hkv8_d128_q1_kv32768,b64_hq32_hkv32_d128_q1_kv4096 --benchmark_filter='^(attention/(decode_splitk|torch_sdpa_cudnn)/|floor/)' --benchmark_repetitions=3 --benchmark_out=$O/attn_${m}_$i.json --benchmark_out_format=json > "$O/attn_${m}_$i.log" 2>&1
  echo "attn $m $i rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
  SOLBENCH_FLUSH_METHOD=$m timeout 60 build/release/bench/bench_rmsnorm --dtypes=bf16 --shapes=2048x2048,16384x4096 --benchmark_filter='^(rmsnorm/(vectorized|ref_copy|ref_copy_kernel|torch_rms_norm)/|floor/)' --benchmark_repetitions=3 --benchmark_out=$O/rms_${m}_$i.json --benchmark_out_format=json > "$O/rms_${m}_$i.log" 2>&1
  echo "rms $m $i rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done; done
cd "$OUT" && tar czf o60.tgz o60 && rm -rf o60
