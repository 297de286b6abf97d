#!/usr/bin/env bash
set -u
O=/tmp/o30; mkdir -p "$O"
start=$(date +%s)
echo "tree of $(cat .devcall/s/commit.txt)" > "$O/exp.txt"
PATCH="experiments/decode_splitk_tc_8warps.patch experiments/decode_splitk_cluster_combine.patch" SHAPES=anchors,b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv32_d128_q1_kv32768 BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/cold' \
  timeout 570 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=20 SB_DECODE_EXPERIMENT=21 SB_DECODE_EXPERIMENT=22 SB_DECODE_EXPERIMENT=23 > "$O/exp.log" 2>&1
echo "gpu_experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp .devcall/s/c30.sh "$O/device_command.sh"
tar czf "$OUT/o30.tgz" -C /tmp o30
