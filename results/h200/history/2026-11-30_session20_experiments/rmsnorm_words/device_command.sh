#!/usr/bin/env bash
# Session 20, call 8: rmsnorm_words.patch (=33: the latency/bandwidth kernel's 16-bit rows converted from raw
# words, bit-identical output) against the default, five shapes, bf16 cold and hot, two passes; the RMSNorm
# GPU tests of both builds first. No sanitizers (budget): a first reading only.
set -u
O=$OUT/o80; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c80.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_words.patch SHAPES=2048x2048,8192x768,256x4096,4096x4096,16384x4096 \
  BENCH_FILTER='^rmsnorm/(vectorized|ref_copy_kernel)/bf16/.*/(cold|hot)' \
  timeout 165 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=33 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o80.tgz o80 && rm -rf o80
