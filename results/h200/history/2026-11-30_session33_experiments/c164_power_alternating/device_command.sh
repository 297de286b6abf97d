#!/usr/bin/env bash
# Session 33, c164: is wgmma_flash's lower SM clock in the full run (c163) its own power draw or the order?
# The four prefill anchors, cold and hot, 3 repetitions as in the full run, one implementation per process,
# alternating wgmma_flash and SDPA cuDNN twice, with nvidia-smi sampling power and SM clock every 100 ms.
set -u
O=$OUT/o164; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c164.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha) timeout 300 cmake --build build/release -j 16 --target bench_attention > "$O/build.log" 2>&1; t "build rc=$?"
i=0
for impl in wgmma_flash torch_sdpa_cudnn wgmma_flash torch_sdpa_cudnn; do
  i=$((i+1))
  nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu --format=csv,noheader -lms 100 > "$O/smi_${i}_$impl.csv" 2>&1 &
  smi=$!
  timeout 100 build/release/bench/bench_attention --shapes=anchors --dtypes=bf16 --benchmark_repetitions=3 \
    --benchmark_filter="attention/$impl/bf16/prefill/" --benchmark_out="$O/p${i}_$impl.json" --benchmark_out_format=json > "$O/p${i}_$impl.txt" 2>&1
  rc=$?; kill $smi; t "$i $impl rc=$rc"
done
cat "$O/exp.txt" "$O/gpu_start.txt"
for f in "$O"/p*.txt; do echo "$f"; grep -E '_median' "$f" | awk '{print $1, $2}'; done
cd "$OUT" && tar czf o164.tgz o164 && rm -rf o164
