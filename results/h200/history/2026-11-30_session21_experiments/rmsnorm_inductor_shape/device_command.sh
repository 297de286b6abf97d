#!/usr/bin/env bash
# Session 21, call 3: rmsnorm_inductor_shape.patch, =36 (bandwidth rows of <= 256 vectors and <= 16 MiB of
# x in Inductor's 2048^2 launch shape: one 16-byte vector a thread, 512-thread blocks, w in registers),
# =37 (the same, w staged), =38 (two vectors a thread, w in registers) against the default; 2048^2 and
# 8192 x 768 (changed) and three unchanged controls, bf16 cold and hot, two passes; the RMSNorm GPU tests of
# every build; memcheck and racecheck of =36.
set -u
O=$OUT/o83; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c83.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_inductor_shape.patch SHAPES=2048x2048,8192x768,4096x4096,16384x4096,65536x1024 \
  BENCH_FILTER='^rmsnorm/(vectorized|ref_copy_kernel|torch_rms_norm)/bf16/.*/(cold|hot)' \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS='SB_RMSNORM_EXPERIMENT_36' SANITIZE_TIMEOUT=200 \
  timeout 560 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=36 SB_RMSNORM_EXPERIMENT=37 SB_RMSNORM_EXPERIMENT=38 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o83.tgz o83 && rm -rf o83
