#!/usr/bin/env bash
# Session 57, c277: experiments/decode_tc_one_wave_stages.patch, =60 / =61 / =62 (5 / 6 / 4 stages for a one-block-an-SM
# tensor-core grid at head_dim 128) against the default (3), its prediction committed first (experiments/README.md at
# 456d50e); the decode GPU tests of every build, memcheck and racecheck of =60 and =61 over a decode selection;
# five GQA decode shapes, bf16, cold, 5 repetitions, two passes (build order reversed in the second), cuDNN beside them.
set -u
O=$OUT/o277; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c277.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_tc_one_wave_stages.patch TEST_FILTER='*DecodeSplitk*' REPETITIONS=5 \
  SHAPES=b16_hq32_hkv8_d128_q1_kv32768,b16_hq32_hkv8_d128_q1_kv8192,b1_hq32_hkv8_d128_q1_kv32768,b4_hq32_hkv8_d128_q1_kv131072,b256_hq32_hkv8_d128_q1_kv4096 \
  BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/bf16/decode/.*/cold' \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS='SB_DECODE_EXPERIMENT_60 SB_DECODE_EXPERIMENT_61' SANITIZE_TIMEOUT=150 \
  RACECHECK_FILTER='*DecodeSplitk*splits1_*:*DecodeSplitk*splits3*:*DecodeSplitk*splits12*:*DecodeSplitk*splits16*:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*' \
  timeout 560 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=60 SB_DECODE_EXPERIMENT=61 SB_DECODE_EXPERIMENT=62 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/exp/summary.txt" 2>/dev/null
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]" "$O"/exp/*_test.log | head -20
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$O"/exp/*check*.log | sort | uniq -c
tail -15 "$O/exp.log"
for f in "$O"/exp/*.json "$O"/exp/*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o277.tgz o277 && rm -rf o277
