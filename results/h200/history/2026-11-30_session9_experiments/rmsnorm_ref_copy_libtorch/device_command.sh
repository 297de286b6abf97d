#!/usr/bin/env bash
set -u
O=/tmp/o19; mkdir -p "$O"
start=$(date +%s)
echo "tree of $(cat .devcall/s/commit.txt)" > "$O/exp.txt"
BENCH=bench_rmsnorm SHAPES=2048x2048,8192x768,4096x4096,16384x4096 BENCH_FILTER='^rmsnorm/(vectorized|ref_copy)/.*/cold' \
  NCU_SHAPES=2048x2048 NCU_CACHE=none \
  timeout 430 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=0 > "$O/exp.log" 2>&1
echo "gpu_experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp .devcall/s/c19.sh "$O/device_command.sh"
tar czf "$OUT/o19.tgz" -C /tmp o19
