#!/usr/bin/env bash
# Session 39, c193: wgmma_flash with the dead halves (503b488) against the kernel before it (before_dead_halves.patch)
# on the 20 decode shapes (q_len 1), bf16, cold and hot, three passes: 503b488's run read wgmma_flash's decode row b1 h32
# KV 4096 cold 5.0% slower than 3ee8f28's at the same clock (a block that runs alone, its per-tile branches on the
# critical path?). With the WgmmaFlash tests of each build.
set -u
O=$OUT/o193; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c193.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
PATCH=.devcall/s/before_dead_halves.patch TEST_FILTER='WgmmaFlash*' PASSES=3 \
  BENCH_FILTER='^attention/wgmma_flash/bf16/decode/' SHAPES=decode \
  timeout 280 scripts/gpu_experiments.sh "$O/exp" SB_WGMMA_FLASH_BEFORE_DEAD_HALVES=1 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"
grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -v '^attention' | head -10
sed 's|attention/wgmma_flash/bf16/decode/||' "$O/exp/summary.txt" 2>/dev/null | grep SB_ | head -50
cd "$OUT" && tar czf o193.tgz o193 && rm -rf o193
