#!/usr/bin/env bash
set -u
O=/tmp/o22; mkdir -p "$O"
start=$(date +%s)
cmake -S . -B /tmp/b22 -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/build.log" 2>&1 &&
  timeout 100 cmake --build /tmp/b22 -j 16 --target bench_attention >> "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
timeout 100 ncu --clock-control none --cache-control all -k 'regex:split_kernel|combine_kernel' --launch-skip 0 --launch-count 4 \
  --set full --csv --page raw \
  /tmp/b22/bench/bench_attention --profile --dtypes=bf16 --shapes=b1_hq32_hkv8_d128_q1_kv4096 \
  --benchmark_filter='^attention/decode_splitk/bf16/.*/cold' > "$O/ncu_full_b1_kv4096.csv" 2>&1
echo "ncu rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
gzip -9 -n "$O/ncu_full_b1_kv4096.csv"
cp .devcall/s/c22.sh "$O/device_command.sh"
tar czf "$OUT/o22.tgz" -C /tmp o22
