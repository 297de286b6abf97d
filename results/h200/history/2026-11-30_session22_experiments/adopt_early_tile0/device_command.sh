#!/usr/bin/env bash
# Session 22, call 1: the adopted prologue (=58 as the single path; block_coords 32-bit for both split kernels)
# against e08717a's kernels (revert_58.patch, a no-op switch), two passes; b1 GQA KV 1024 / 4096 (tensor-core
# kernel), MHA b1 KV 4096, b64 KV 4096, b256 KV 1024 (FMA kernel), cold and hot; memcheck over every decode test
# and racecheck over session 13's selection, of the adopted tree, 8 shards each.
set -u
O=$OUT/o87; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c87.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=.devcall/s/revert_58.patch TEST_FILTER='*DecodeSplitk*' \
  SHAPES=b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv32_d128_q1_kv4096,b64_hq32_hkv32_d128_q1_kv4096,b256_hq32_hkv32_d128_q1_kv1024 \
  BENCH_FILTER='^attention/decode_splitk/.*_q1_.*/(cold|hot)' \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS='default' SANITIZE_SHARDS=8 SANITIZE_TIMEOUT=300 \
  RACECHECK_FILTER='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*' \
  timeout 570 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=99 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o87.tgz o87 && rm -rf o87
