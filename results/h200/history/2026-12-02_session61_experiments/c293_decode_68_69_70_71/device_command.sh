#!/usr/bin/env bash
# Session 61, c293: experiments/decode_pairs_no_barrier.patch (=68 pairs without the barrier, =69 no pairs) and
# decode_fma_pairs.patch (=70 / =71: the unsplit FMA grid in clusters of 2 / 4) against the default build, decode_splitk
# bf16 cold at 7 shapes, 3 repetitions, 2 passes; predictions in experiments/README.md, written before any run.
set -u
O=$OUT/o293; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c293.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH='experiments/decode_pairs_no_barrier.patch experiments/decode_fma_pairs.patch' TEST_FILTER='*DecodeSplitk*' REPETITIONS=3 PASSES=2 \
  SHAPES=b16_hq32_hkv8_d128_q1_kv32768,b16_hq32_hkv8_d128_q1_kv8192,b8_hq64_hkv16_d128_q1_kv32768,b32_hq16_hkv4_d128_q1_kv32768,b256_hq32_hkv32_d128_q1_kv1024,b64_hq32_hkv32_d128_q1_kv4096,b1_hq32_hkv32_d128_q1_kv32768 \
  BENCH_FILTER='^attention/decode_splitk/bf16/decode/.*/cold' \
  timeout 555 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=68 SB_DECODE_EXPERIMENT=69 SB_DECODE_EXPERIMENT=70 SB_DECODE_EXPERIMENT=71 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/exp/summary.txt" 2>/dev/null
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]" "$O"/exp/*_test.log | head -20
tail -30 "$O/exp.log"
for f in "$O"/exp/*.json "$O"/exp/*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o293.tgz o293 && rm -rf o293
