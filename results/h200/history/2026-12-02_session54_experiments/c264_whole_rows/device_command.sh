#!/usr/bin/env bash
# Session 54, c264: experiments/decode_read_whole_rows.patch applied, bench_attention built without libtorch, then
# decode_splitk, ref_kv_read, ref_kv_stream and ref_kv_rows at GQA b16 KV 32768, MHA b64 KV 4096, MHA b256 KV 1024 and GQA
# b256 KV 4096 (bf16, cold, 3 repetitions, protocol v378), after ref_kv_rows's GPU test. The whole log streams to $OUT.
set -u
O=$OUT/o264; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cat .devcall/s/sha > "$O/sha.txt"; cp .devcall/s/c264.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid --format=csv,noheader > "$O/gpu.txt" 2>&1
git apply experiments/decode_read_whole_rows.patch; t "apply rc=$?"
B=build/x
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target bench_attention test_gpu >> "$O/build.log" 2>&1; t "build rc=$?"
$B/tests/test_gpu --gtest_filter='AttentionKvStream.*' > "$O/test.log" 2>&1; t "test rc=$?"
F='^attention/(decode_splitk|ref_kv_read|ref_kv_stream|ref_kv_rows)/bf16/decode/(b16_hq32_hkv8_d128_q1_kv32768|b256_hq32_hkv32_d128_q1_kv1024|b64_hq32_hkv32_d128_q1_kv4096|b256_hq32_hkv8_d128_q1_kv4096)/cold'
$B/bench/bench_attention --shapes=decode --dtypes=bf16 --benchmark_filter="$F" --benchmark_repetitions=3 \
  --benchmark_display_aggregates_only=true --benchmark_out="$O/bench.json" --benchmark_out_format=json > "$O/bench.log" 2>&1; t "bench rc=$?"
cat "$O/exp.txt" "$O/gpu.txt"; tail -2 "$O/test.log"; grep "_median" "$O/bench.log" | awk '{print $1, $2}'
