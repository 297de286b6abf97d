#!/usr/bin/env bash
# Session 38, c189: experiments/wgmma_flash_dead_halves.patch =2 (the skip only where the kernel has the intra-warpgroup
# overlap) against the default over the 30 prefill shapes, bf16 cold, two passes, with its tests. (Its overlap kernels
# compile from the same code as =1's, which c188 ran under memcheck and racecheck; its other kernels' SASS is the default's.)
set -u
O=$OUT/o189; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c189.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
PATCH=experiments/wgmma_flash_dead_halves.patch TEST_FILTER='*TiledFlash*:WgmmaFlash*' \
  BENCH_FILTER='^attention/wgmma_flash/bf16/prefill/.*/cold' SHAPES=prefill \
  timeout 280 scripts/gpu_experiments.sh "$O/exp" SB_WGMMA_FLASH_EXPERIMENT=2 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"
grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -v '^attention' | head -10
sed 's|attention/wgmma_flash/bf16/prefill/||; s|/cold||' "$O/exp/summary.txt" 2>/dev/null | grep SB_ | head -40
cd "$OUT" && tar czf o189.tgz o189 && rm -rf o189
