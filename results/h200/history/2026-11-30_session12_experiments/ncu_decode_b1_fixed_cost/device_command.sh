#!/usr/bin/env bash
# Session 12, call 5: Nsight Compute of decode_splitk's clustered split kernel at b1 GQA KV 1024 and 4096,
# cold (the harness's flush, no cache control, application replay), source-level (SASS) counters and warp
# states: where the 8.8 us fixed cost goes (experiments/README.md).
set -u
O=$OUT/o42; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c42.sh "$O/device_command.sh"
git log --oneline -1 > "$O/exp.txt"
cmake -S . -B build/nt -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/build.log" 2>&1 &&
  cmake --build build/nt -j 16 --target bench_attention >> "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
timeout 170 ncu --cache-control none --replay-mode application --section SourceCounters --section WarpStateStats \
  --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis --import-source yes -k regex:split_kernel \
  -o "$O/b1_cold" build/nt/bench/bench_attention --profile --shapes=b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv4096 \
  --benchmark_filter='^attention/decode_splitk/bf16/.*/cold' > "$O/ncu.log" 2>&1
echo "ncu rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
ncu -i "$O/b1_cold.ncu-rep" --page details --csv > "$O/details.csv" 2>&1
ncu -i "$O/b1_cold.ncu-rep" --page source --csv --print-source sass > "$O/source_sass.csv" 2>&1
ncu -i "$O/b1_cold.ncu-rep" --page raw --csv > "$O/raw.csv" 2>&1
ncu --help > "$O/ncu_help.txt" 2>&1
echo "exports done at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o42.tgz o42 && rm -rf o42
