#!/usr/bin/env bash
# Session 20, call 7: Nsight Compute (full set with source counters, clean caches, kernel replay) of
# `vectorized` and of the copy kernel of the same bytes at 2048 x 2048 bf16: where the warps of the one-wave
# RMSNorm stall that a copy's do not (the 1.1 us gap of issue 3's 2048^2 item).
set -u
O=$OUT/o79; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c79.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
{ cmake -S . -B build/n -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 && cmake --build build/n --target bench_rmsnorm; } > "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for c in vectorized ref_copy_kernel; do
  timeout 60 ncu --clock-control none --cache-control all --set full --import-source no -k 'regex:^(kernel|copy_kernel_impl)$' -s 3 -c 1 \
    -o "$O/ncu_$c" build/n/bench/bench_rmsnorm --profile --dtypes=bf16 --shapes=2048x2048 \
    --benchmark_filter="^rmsnorm/$c/bf16/.*/cold" > "$O/ncu_$c.log" 2>&1
  echo "ncu $c rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
  ncu -i "$O/ncu_$c.ncu-rep" --csv --page raw > "$O/ncu_${c}_raw.csv" 2>&1
  ncu -i "$O/ncu_$c.ncu-rep" --csv --page source --print-source sass > "$O/ncu_${c}_sass.csv" 2>&1
  echo "export $c rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
cd "$OUT" && tar czf o79.tgz o79 && rm -rf o79
