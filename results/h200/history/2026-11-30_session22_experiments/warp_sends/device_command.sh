#!/usr/bin/env bash
# Session 22, call 4: decode_splitk_warp_sends.patch, =59 (the clustered tensor-core kernel's warps send their own
# partial rows to the owner block; no block merge, no block barriers after the loop) against the default;
# b1 GQA KV 1024 / 4096 (8 clustered splits), forced 4 splits at KV 4096 (a 4-block cluster), b1 KV 16384
# (16 splits, unclustered: a control), cold and hot; two passes; memcheck and racecheck of =59, 8 shards.
set -u
O=$OUT/o90; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c90.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_splitk_warp_sends.patch TEST_FILTER='*DecodeSplitk*' \
  SHAPES=b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv16384 \
  BENCH_FILTER='^attention/(decode_splitk|decode_splitk_s4)/.*_q1_.*/(cold|hot)' \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS='SB_DECODE_EXPERIMENT_59' SANITIZE_SHARDS=8 SANITIZE_TIMEOUT=240 \
  RACECHECK_FILTER='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*' \
  timeout 450 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=59 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o90.tgz o90 && rm -rf o90
