#!/usr/bin/env bash
set -u
O=/tmp/o32; mkdir -p "$O"
start=$(date +%s)
echo "tree of $(cat .devcall/s/commit.txt)" > "$O/exp.txt"
PATCH=experiments/decode_splitk_cluster_combine.patch SHAPES=anchors,b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv16384 BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/cold' \
  timeout 400 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=24 SB_DECODE_EXPERIMENT=25 > "$O/exp.log" 2>&1
echo "gpu_experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp .devcall/s/c32.sh "$O/device_command.sh"
tar czf "$OUT/o32.tgz" -C /tmp o32
