#!/usr/bin/env bash
# Session 16, call 1: decode_splitk_kv_cache_hints.patch (=44 evict_first policy on K/V cp.async, =45 .L2::256B,
# =46 both) against the default, two passes at the six below-cuDNN/target shapes; then memcheck of =44 and =46.
set -u
O=$OUT/o55; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c55.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
echo "tree $(git rev-parse --short HEAD)" > "$O/exp.txt"
PATCH=experiments/decode_splitk_kv_cache_hints.patch TEST_FILTER='*DecodeSplitk*' \
  SHAPES=b1_hq32_hkv8_d128_q1_kv4096,b4_hq32_hkv8_d128_q1_kv131072,b16_hq32_hkv8_d128_q1_kv8192,b16_hq32_hkv8_d128_q1_kv32768,b64_hq32_hkv32_d128_q1_kv4096,b256_hq32_hkv32_d128_q1_kv1024 \
  BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/(cold|hot)' \
  timeout 500 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=44 SB_DECODE_EXPERIMENT=45 SB_DECODE_EXPERIMENT=46 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for n in 44 46; do
  t=$(( 570 - ($(date +%s) - start) ))
  [ "$t" -gt 20 ] || break
  b=build/exp_SB_DECODE_EXPERIMENT_$n/tests/test_gpu
  SOLBENCH_REQUIRE_GPU=1 timeout $t compute-sanitizer --tool memcheck --error-exitcode 9 $b --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_$n.log" 2>&1
  echo "memcheck $n rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
cd "$OUT" && tar czf o55.tgz o55 && rm -rf o55
