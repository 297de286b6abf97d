#!/usr/bin/env bash
# Session 58, c282: experiments/decode_lockstep_clusters.patch =66 (pairs of kv heads as clusters, a barrier every
# tile) and =67 (the same pairs, no barrier) against the default build: the 128 decode GPU tests of each build; GQA
# b16 KV 32768 and 64/16 b8 KV 32768, bf16, cold, 3 repetitions, two passes, SDPA cuDNN beside them; racecheck of =66
# and memcheck of =67 over the tests that take their path. Prediction committed first (experiments/README.md, sha.txt).
set -u
O=$OUT/o282; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c282.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH='experiments/decode_lockstep_clusters.patch' TEST_FILTER='*DecodeSplitk*' REPETITIONS=3 \
  SHAPES=b16_hq32_hkv8_d128_q1_kv32768,b8_hq64_hkv16_d128_q1_kv32768 \
  BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/bf16/decode/.*/cold' \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS='SB_DECODE_EXPERIMENT_66 SB_DECODE_EXPERIMENT_67' SANITIZE_TIMEOUT=90 SANITIZE_SHARDS=2 \
  SANITIZE_FILTER='*DecodeSplitkExtreme*splits1*' RACECHECK_FILTER='*DecodeSplitkExtreme*splits1*' \
  timeout 390 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=66 SB_DECODE_EXPERIMENT=67 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/exp/summary.txt" 2>/dev/null
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]" "$O"/exp/*_test.log | head -20
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$O"/exp/*check*.log | sort | uniq -c
tail -8 "$O/exp.log"
for f in "$O"/exp/*.json "$O"/exp/*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o282.tgz o282 && rm -rf o282
