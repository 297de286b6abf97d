#!/usr/bin/env bash
set -u
O=/tmp/o20; mkdir -p "$O"
start=$(date +%s)
echo "tree of $(cat .devcall/s/commit.txt) + gpu_experiments.sh NCU_REPLAY/NCU_METRICS" > "$O/exp.txt"
BENCH=bench_rmsnorm PASSES=1 SHAPES=2048x2048 BENCH_FILTER='^rmsnorm/(vectorized|ref_copy|ref_copy_kernel)/bf16/.*/cold' \
  NCU_SHAPES=2048x2048 NCU_CACHE=none NCU_REPLAY=application NCU_KERNELS='regex:^kernel$|copy_kernel_impl' \
  NCU_FILTER='^rmsnorm/(vectorized|ref_copy_kernel)/bf16/.*/cold' \
  NCU_METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_write.sum \
  timeout 300 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=0 > "$O/exp.log" 2>&1
echo "gpu_experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp .devcall/s/c20.sh "$O/device_command.sh"
tar czf "$OUT/o20.tgz" -C /tmp o20
