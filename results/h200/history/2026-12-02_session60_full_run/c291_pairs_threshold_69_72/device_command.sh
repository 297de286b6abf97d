#!/usr/bin/env bash
# Session 60, c291: experiments/decode_pairs_no_barrier.patch =69 (plain grid, no pairs) and =72 (pairs at every
# one-wave grid) beside the default build (pairs over half the SMs, 8d053ec), the forced single-split rows
# (--split-sweep=all, decode_splitk_s1) of GQA 32/8 d128 KV 32768 at b1, b4, b8, b9, b12, b16 (8-128 blocks), bf16
# cold, 3 repetitions, two passes; prediction in experiments/README.md (b1ad311), written before any run.
set -u
O=$OUT/o291; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c291.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH='experiments/decode_pairs_no_barrier.patch' TEST_FILTER='*DecodeSplitk*' REPETITIONS=3 BENCH_ARGS=--split-sweep=all \
  SHAPES=b1_hq32_hkv8_d128_q1_kv32768,b4_hq32_hkv8_d128_q1_kv32768,b8_hq32_hkv8_d128_q1_kv32768,b9_hq32_hkv8_d128_q1_kv32768,b12_hq32_hkv8_d128_q1_kv32768,b16_hq32_hkv8_d128_q1_kv32768 \
  BENCH_FILTER='^attention/decode_splitk_s1/bf16/decode/.*/cold' \
  timeout 390 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=69 SB_DECODE_EXPERIMENT=72 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/exp/summary.txt" 2>/dev/null
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]" "$O"/exp/*_test.log | head -20
tail -8 "$O/exp.log"
for f in "$O"/exp/*.json "$O"/exp/*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o291.tgz o291 && rm -rf o291
