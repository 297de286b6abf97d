#!/usr/bin/env bash
# Session 29, c130: experiments/decode_kv_l2_policy.patch, =61 (evict_last) and =62 (evict_normal: the hinted
# copy at the default priority) beside the default, two passes, at nine decode shapes cold and the five b1
# shapes hot too (c129 found both =60 and =61 ~5% faster at b1 GQA KV 4096 only); then the LDGSTS forms in
# each build's SASS.
set -u
O=$OUT/o130; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c130.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_kv_l2_policy.patch TEST_FILTER='*DecodeSplitk*' PASSES=2 \
SHAPES=b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv32_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv16384,b1_hq32_hkv8_d128_q1_kv32768,b16_hq32_hkv8_d128_q1_kv32768,b64_hq32_hkv32_d128_q1_kv4096,b256_hq32_hkv32_d128_q1_kv1024,b4_hq32_hkv8_d128_q1_kv131072 \
DTYPES=bf16 BENCH_FILTER='^attention/decode_splitk/bf16/decode/(.*/cold|b1_.*/hot)' \
timeout 500 scripts/gpu_experiments.sh "$O/x" SB_DECODE_EXPERIMENT=61 SB_DECODE_EXPERIMENT=62 > "$O/exp.log" 2>&1
t "experiments rc=$?"
for n in default SB_DECODE_EXPERIMENT_61 SB_DECODE_EXPERIMENT_62; do
  f=$(find build/exp_$n -name '*decode_splitk*.o' | head -1)
  echo "== $n ($f)" >> "$O/sass_ldgsts.txt"
  timeout 60 cuobjdump -sass "$f" 2>/dev/null | grep -oE "LDGSTS[.A-Z0-9_]*" | sort | uniq -c >> "$O/sass_ldgsts.txt"
done
t "sass done"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$O/gpu_start.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt" "$O/sass_ldgsts.txt"; cat "$O/x/summary.txt" 2>/dev/null | head -60
grep -hE "PASSED|FAILED" "$O"/x/*_test.log | tail -8
cd "$OUT" && tar czf o130.tgz o130 && rm -rf o130
