#!/usr/bin/env bash
# Session 37, c185: experiments/wgmma_flash_persistent_wide.patch =1 (D 128 persistent blocks, 8-byte spill) and =2
# (the same without the intra-warpgroup overlap, no spill) against the default, the 15 D 128 prefill shapes, bf16 cold,
# two passes. Short: 262 s of the session's device time were left.
set -u
O=$OUT/o185; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c185.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
PATCH=experiments/wgmma_flash_persistent_wide.patch TEST_FILTER='*TiledFlash*:WgmmaFlash*' \
  BENCH_FILTER='^attention/wgmma_flash/bf16/prefill/.*d128.*/cold' SHAPES=prefill \
  timeout 160 scripts/gpu_experiments.sh "$O/exp" SB_WGMMA_FLASH_EXPERIMENT=1 SB_WGMMA_FLASH_EXPERIMENT=2 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -v '^attention' | tail -8
sed 's|attention/wgmma_flash/bf16/prefill/||; s|/cold||' "$O/exp/summary.txt" 2>/dev/null | grep SB_ | head -40
cd "$OUT" && tar czf o185.tgz o185 && rm -rf o185
