#!/usr/bin/env bash
# Session 16, call 3: rmsnorm_w_early.patch =24 (w in registers), =27 (w staged for rows <= 32 KB), =28 (=27 with
# raw x in every 16-byte kernel) against the default at four shapes; sanitizers of =27 and =28.
set -u
O=$OUT/o57; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c57.sh "$O/device_command.sh"
echo "tree $(git rev-parse --short HEAD) + experiments/rmsnorm_w_early.patch as in the working tree" > "$O/exp.txt"
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_w_early.patch SHAPES=4096x16384,16384x4096,32768x8192,2048x2048 \
  BENCH_FILTER='^rmsnorm/(vectorized|ref_copy|torch_rms_norm)/bf16/.*/(cold|hot)' \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS='SB_RMSNORM_EXPERIMENT_27 SB_RMSNORM_EXPERIMENT_28' SANITIZE_TIMEOUT=200 \
  timeout 540 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=24 SB_RMSNORM_EXPERIMENT=27 SB_RMSNORM_EXPERIMENT=28 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp experiments/rmsnorm_w_early.patch "$O/"
cd "$OUT" && tar czf o57.tgz o57 && rm -rf o57
