#!/usr/bin/env bash
# Nsight Compute over chosen benchmark cases: kernel duration, SM clock, DRAM bytes, registers, grid and
# occupancy, as CSV. The bench binary's --profile mode launches each case a fixed few times, each inside an
# NVTX range named after the case, so ncu sees only the kernels of the cases the filter names.
#   tools/ncu_profile.sh BENCH SHAPES FILTER [KERNELS] > ncu.csv
#   tools/ncu_profile.sh bench_rmsnorm 1x4096,64x8192 '(vectorized|block_reduce)/bf16/.*/cold'
#   tools/ncu_profile.sh bench_attention b1_hq32_hkv8_d128_q1_kv4096 'decode_splitk/bf16/.*/cold' \
#     'regex:split_kernel|combine'
# KERNELS is ncu's -k (default 'regex:^kernel$', the name every variant's kernel has). NCU_SET=full collects
# ncu's full section set (stall reasons, occupancy, memory tables) instead of the metric list.
# BUILD_DIR names the build (default build/release). Exit status: ncu's, 2 on bad usage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 3 ] && [ $# -le 4 ] || { echo "usage: tools/ncu_profile.sh BENCH SHAPES FILTER [KERNELS]" >&2; exit 2; }
binary=${BUILD_DIR:-$root/build/release}/bench/$1
[ -x "$binary" ] || { echo "ncu_profile.sh: $binary is not built" >&2; exit 2; }
what=(--metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active)
[ -n "${NCU_SET:-}" ] && what=(--set "$NCU_SET")
exec ncu --clock-control none --cache-control all -k "${4:-regex:^kernel\$}" --csv --page raw "${what[@]}" \
  "$binary" --profile --shapes="$2" --benchmark_filter="$3"
