#!/usr/bin/env bash
# Session 26, c116: b2657aa's kernels. (1) Every forced split count beside cuDNN at the two decode shapes
# still below 1.0 in the full run (GQA b16 KV 32768, MHA b256 KV 1024), two processes; (2) the README's
# test command (cmake --workflow --preset ci) in a clean build/ci, GPU tests run.
set -u
O=$OUT/o116; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c116.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 200 cmake --build build/release -j 16 --target bench_attention > "$O/build.log" 2>&1; t "build rc=$?"
for p in 1 2; do
  timeout 90 build/release/bench/bench_attention --shapes=b16_hq32_hkv8_d128_q1_kv32768,b256_hq32_hkv32_d128_q1_kv1024 --dtypes=bf16 \
    --split-sweep=all --benchmark_filter='(decode_splitk|torch_sdpa_cudnn).*cold' --benchmark_repetitions=3 \
    --benchmark_display_aggregates_only=true --benchmark_out="$O/sweep_$p.json" --benchmark_out_format=json > "$O/sweep_$p.log" 2>&1
  t "sweep pass $p rc=$?"
done
rm -rf build/ci
SOLBENCH_GIT_COMMIT=b2657aa5e869f6eb926c55d0c70b0e7fe37f4ee2 timeout $(( 580 - ($(date +%s) - start) )) cmake --workflow --preset ci > "$O/workflow.log" 2>&1
t "workflow rc=$?"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -h "_median" "$O"/sweep_*.log | cut -c1-110; grep -E "tests passed|tests failed|Total Test" "$O/workflow.log"
gzip -9 "$O/workflow.log"
cd "$OUT" && tar czf o116.tgz o116 && rm -rf o116
