#!/usr/bin/env bash
# Session 58, c280: experiments/decode_grid_head_major.patch (=63: the split grid kv-head-major) and
# experiments/decode_lockstep_clusters.patch (=64 / =65: one-wave unsplit tc grids as clusters of 4 kv heads of a
# sequence passing a cluster barrier every 1 / 4 tiles) against the default build, both patches applied to the
# switch builds (each guarded by its own switch); predictions committed first (experiments/README.md, the commit in
# sha.txt). The 128 decode GPU tests of every build; eight decode shapes, bf16, cold, 5 repetitions, two passes (build
# order reversed in the second), SDPA cuDNN beside them; memcheck of =63 and =64 over the tests that take their paths.
set -u
O=$OUT/o280; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c280.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH='experiments/decode_grid_head_major.patch experiments/decode_lockstep_clusters.patch' TEST_FILTER='*DecodeSplitk*' REPETITIONS=5 \
  SHAPES=b16_hq32_hkv8_d128_q1_kv32768,b8_hq64_hkv16_d128_q1_kv32768,b32_hq16_hkv4_d128_q1_kv32768,b16_hq32_hkv8_d128_q1_kv8192,b256_hq32_hkv32_d128_q1_kv1024,b64_hq32_hkv32_d128_q1_kv4096,b256_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv4096 \
  BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/bf16/decode/.*/cold' \
  SANITIZE=memcheck SANITIZE_BUILDS='SB_DECODE_EXPERIMENT_63 SB_DECODE_EXPERIMENT_64' SANITIZE_TIMEOUT=120 \
  SANITIZE_FILTER='*DecodeSplitk*splits1_*:*DecodeSplitk*splits3*:*DecodeSplitk*splits12*:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*' \
  timeout 540 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=63 SB_DECODE_EXPERIMENT=64 SB_DECODE_EXPERIMENT=65 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/exp/summary.txt" 2>/dev/null
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]" "$O"/exp/*_test.log | head -20
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$O"/exp/*check*.log | sort | uniq -c
tail -15 "$O/exp.log"
for f in "$O"/exp/*.json "$O"/exp/*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o280.tgz o280 && rm -rf o280
