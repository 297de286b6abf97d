#!/usr/bin/env bash
set -u
O=/tmp/o21; mkdir -p "$O"
start=$(date +%s)
echo "tree of $(git rev-parse --short HEAD 2>/dev/null || cat .devcall/s/commit.txt)" > "$O/exp.txt"
cmake -S . -B /tmp/b21 -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/build.log" 2>&1 &&
  timeout 100 cmake --build /tmp/b21 -j 16 --target bench_attention >> "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
timeout 110 ncu --clock-control none --cache-control none --replay-mode application -k 'regex:split_kernel|combine_kernel' \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct --csv --page raw \
  /tmp/b21/bench/bench_attention --profile --dtypes=bf16 --shapes=b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv1024 \
  --benchmark_filter='^attention/decode_splitk/bf16/.*/cold' > "$O/ncu_decode_cold_state.csv" 2>&1
echo "ncu rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
gzip -9 -n "$O/ncu_decode_cold_state.csv"
cp .devcall/s/c21.sh "$O/device_command.sh"
tar czf "$OUT/o21.tgz" -C /tmp o21
