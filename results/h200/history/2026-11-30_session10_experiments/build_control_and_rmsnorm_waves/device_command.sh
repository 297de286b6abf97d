#!/usr/bin/env bash
set -u
O=/tmp/o31; mkdir -p "$O"
start=$(date +%s)
echo "tree of $(cat .devcall/s/commit.txt)" > "$O/exp.txt"
nvidia-smi --query-gpu=name,serial,uuid,pci.bus_id,clocks.max.sm,clocks.max.mem --format=csv > "$O/gpu_id.txt" 2>&1
SHAPES=b1_hq32_hkv8_d128_q1_kv4096,b16_hq32_hkv8_d128_q1_kv8192,b64_hq32_hkv8_d128_q1_kv16384 TEST_FILTER='*DecodeSplitk*' BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/cold' \
  timeout 300 scripts/gpu_experiments.sh "$O/ctl" SB_DECODE_EXPERIMENT=0 > "$O/ctl.log" 2>&1
echo "control rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
BENCH=bench_rmsnorm SHAPES=3696x16384,4096x16384,4224x16384 BENCH_FILTER='^rmsnorm/(vectorized|ref_copy|ref_copy_kernel)/bf16/.*/cold' \
  timeout 200 scripts/gpu_experiments.sh "$O/rms" SB_RMSNORM_EXPERIMENT=0 > "$O/rms.log" 2>&1
echo "rmsnorm rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cp .devcall/s/c31.sh "$O/device_command.sh"
tar czf "$OUT/o31.tgz" -C /tmp o31
