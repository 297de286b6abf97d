#!/usr/bin/env bash
set -u
O=/tmp/o16; mkdir -p "$O"
start=$(date +%s)
echo "tree of $(cat .devcall/s/commit.txt)" > "$O/exp.txt"
PATCH=experiments/decode_splitk_tc_exact_q.patch SHAPES=anchors BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/cold' \
  timeout 560 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=15 SB_DECODE_EXPERIMENT=16 SB_DECODE_EXPERIMENT=17 SB_DECODE_EXPERIMENT=18 SB_DECODE_EXPERIMENT=19 > "$O/exp.log" 2>&1
echo "gpu_experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp .devcall/s/c16.sh "$O/device_command.sh"
tar czf "$OUT/o16.tgz" -C /tmp o16
