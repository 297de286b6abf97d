#!/usr/bin/env bash
# Session 29, c129: (A) 962e9ff's new RMSNorm GPU test shapes (300 x 6000, 260 x 8192) with every RMSNorm
# GPU test, then memcheck and racecheck over the new shapes; (B) experiments/decode_kv_l2_policy.patch
# (SB_DECODE_EXPERIMENT=60 evict-first, =61 evict-last on decode_splitk's K/V copies) beside the default,
# two passes, cold, issue 6's three shapes below cuDNN plus b1 KV 4096/131072 and b256 GQA KV 16384.
set -u
O=$OUT/o129; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c129.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/t -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 200 cmake --build build/t -j16 --target test_gpu > "$O/build.log" 2>&1; t "build rc=$?"
T=build/t/tests/test_gpu
SOLBENCH_REQUIRE_GPU=1 timeout 120 $T --gtest_filter='*RmsNorm*' --gtest_brief=1 > "$O/tests.log" 2>&1; t "tests rc=$? $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"
F='*RmsNorm*t300_h6000*:*RmsNorm*t260_h8192*'
SOLBENCH_REQUIRE_GPU=1 $T --gtest_filter="$F" --gtest_list_tests | grep -c '^  ' > "$O/new_tests_count.txt"
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter="$F" --gtest_brief=1 > "$O/memcheck_$k.log" 2>&1 &
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter="$F" --gtest_brief=1 > "$O/racecheck_$k.log" 2>&1 &
done
wait
for f in "$O"/memcheck_*.log "$O"/racecheck_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'PASSED|FAILED' $f | tail -1)" >> "$O/exp.txt"; done
t "sanitizers done (new tests: $(cat "$O/new_tests_count.txt"))"
left=$(( 580 - ($(date +%s) - start) ))
PATCH=experiments/decode_kv_l2_policy.patch TEST_FILTER='*DecodeSplitk*' PASSES=2 \
SHAPES=b16_hq32_hkv8_d128_q1_kv32768,b256_hq32_hkv32_d128_q1_kv1024,b64_hq32_hkv32_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv131072,b256_hq32_hkv8_d128_q1_kv16384 \
DTYPES=bf16 BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/cold' \
timeout $left scripts/gpu_experiments.sh "$O/x" SB_DECODE_EXPERIMENT=60 SB_DECODE_EXPERIMENT=61 > "$O/exp.log" 2>&1
t "experiments rc=$? (limit $left s)"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$O/gpu_start.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/x/summary.txt" 2>/dev/null | head -60
grep -hE "PASSED|FAILED" "$O"/x/*_test.log | tail -8
tail -3 "$O/exp.log"
cd "$OUT" && tar czf o129.tgz o129 && rm -rf o129
