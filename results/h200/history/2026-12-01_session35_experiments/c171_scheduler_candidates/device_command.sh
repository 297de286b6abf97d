#!/usr/bin/env bash
# Session 35, c171: experiments/wgmma_flash_scheduler.patch =4 (persistent, global counter), =5 (same code, one item a
# block), =6 (=5 with the consumers copying their own Q) against the default, prefill bf16 cold, two passes; Nsight
# Compute of every build at b32 h32 s512 D 64 causal.
set -u
O=$OUT/o171; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c171.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
PATCH=experiments/wgmma_flash_scheduler.patch TEST_FILTER='*TiledFlash*' \
  BENCH_FILTER='^attention/wgmma_flash/bf16/prefill/.*/cold' SHAPES=prefill \
  NCU_SHAPES=b32_hq32_hkv32_d64_q512_kv512_causal NCU_KERNELS='regex:^kernel(_sched)?$' \
  NCU_FILTER='^attention/wgmma_flash/bf16/prefill/.*/cold' \
  timeout 560 scripts/gpu_experiments.sh "$O/exp" SB_WGMMA_FLASH_EXPERIMENT=4 SB_WGMMA_FLASH_EXPERIMENT=5 SB_WGMMA_FLASH_EXPERIMENT=6 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "PASSED|FAILED|BUILD|spill" "$O/experiments.txt" | head; grep -E "FAILED|Failure" "$O"/exp/*_test.log | head -10
sed 's|attention/wgmma_flash/bf16/prefill/||; s|/cold||' "$O/exp/summary.txt" 2>/dev/null | head -120
cd "$OUT" && tar czf o171.tgz o171 && rm -rf o171
