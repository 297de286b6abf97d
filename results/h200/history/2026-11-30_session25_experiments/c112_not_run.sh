#!/usr/bin/env bash
# Session 25's next command, not run (no device time left): does a plan with more, smaller blocks close
# decode_splitk's ~5% gap to cuDNN at MHA b64 on the H200s where it opens? decode_splitk forced to each
# split count at MHA b64 KV 4096 and 16384 (--split-sweep=all, b15e21a), beside cuDNN, two processes, and
# the GPU's UUID: GPU-89ae91f2 and GPU-ee102b7c showed the gap, GPU-34f7f545 and GPU-9daf6d79 did not.
set -u
O=$OUT/o112; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c112.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 150 cmake --build build/release -j 16 > "$O/build.log" 2>&1; echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for p in 1 2; do
  timeout 120 build/release/bench/bench_attention --shapes=b64_hq32_hkv32_d128_q1_kv4096,b64_hq32_hkv32_d128_q1_kv16384 --dtypes=bf16 \
    --split-sweep=all --benchmark_filter='(decode_splitk|torch_sdpa_cudnn).*cold' --benchmark_repetitions=3 \
    --benchmark_display_aggregates_only=true --benchmark_out="$O/sweep_$p.json" --benchmark_out_format=json > "$O/sweep_$p.log" 2>&1
  echo "pass $p rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -h "_median" "$O"/sweep_*.log | cut -c1-110
cd "$OUT" && tar czf o112.tgz o112 && rm -rf o112
