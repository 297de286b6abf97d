#!/usr/bin/env bash
set -u
O=/tmp/o10; mkdir -p "$O"
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_inductor_port.patch SHAPES=default \
  BENCH_FILTER='^rmsnorm/(vectorized|ref_copy|torch_rms_norm)/.*/cold' \
  timeout 530 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=20 SB_RMSNORM_EXPERIMENT=21 > "$O/exp.txt" 2>&1
echo "rc=$?" >> "$O/exp.txt"
tar czf "$OUT/o10.tgz" -C /tmp o10
