#!/usr/bin/env bash
# Session 37, c181: experiments/wgmma_flash_persistent_wide.patch =11 (Q by TMA in the persistent kernel; persistent
# blocks in all three configurations where an item visits <= 10 K/V tiles on average) and =10 (persistent wherever
# there are 2 waves of items) against the default, prefill bf16 cold, two passes; each build's tests; memcheck and
# racecheck over =11's wgmma_flash tests.
set -u
O=$OUT/o181; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c181.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
PATCH=experiments/wgmma_flash_persistent_wide.patch TEST_FILTER='*TiledFlash*:WgmmaFlash*' \
  BENCH_FILTER='^attention/wgmma_flash/bf16/prefill/.*/cold' SHAPES=prefill \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS=SB_WGMMA_FLASH_EXPERIMENT_11 SANITIZE_FILTER='*wgmma_flash*' \
  RACECHECK_FILTER='*MatchesReference*wgmma_flash*' SANITIZE_TIMEOUT=150 \
  timeout 420 scripts/gpu_experiments.sh "$O/exp" SB_WGMMA_FLASH_EXPERIMENT=10 SB_WGMMA_FLASH_EXPERIMENT=11 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -v '^attention' | tail -25
grep -E "FAILED|Failure" "$O"/exp/*_test.log | head -10
sed 's|attention/wgmma_flash/bf16/prefill/||; s|/cold||' "$O/exp/summary.txt" 2>/dev/null | grep SB_ | head -70
cd "$OUT" && tar czf o181.tgz o181 && rm -rf o181
