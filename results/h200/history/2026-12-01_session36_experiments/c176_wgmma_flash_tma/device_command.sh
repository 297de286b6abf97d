#!/usr/bin/env bash
# Session 36, c176: experiments/wgmma_flash_tma.patch (=7, K and V by TMA from one producer thread) against the default,
# prefill bf16 cold, two passes, its tests (and the default's WgmmaFlash tests: the workspace-refusal test added in
# 8249605 has not run on a GPU), memcheck over the wgmma_flash tests and racecheck over its reference checks.
set -u
O=$OUT/o176; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c176.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
PATCH=experiments/wgmma_flash_tma.patch TEST_FILTER='*TiledFlash*:WgmmaFlash*' \
  BENCH_FILTER='^attention/wgmma_flash/bf16/prefill/.*/cold' SHAPES=prefill \
  SANITIZE=memcheck,racecheck SANITIZE_FILTER='*wgmma_flash*' RACECHECK_FILTER='*MatchesReference*wgmma_flash*' SANITIZE_TIMEOUT=200 \
  timeout 570 scripts/gpu_experiments.sh "$O/exp" SB_WGMMA_FLASH_EXPERIMENT=7 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/experiments.txt" | grep -vE '^[0-9]+ (default|SB_)' | head -30
grep -E "FAILED|Failure" "$O"/exp/*_test.log | head -10; grep -h "WgmmaFlash" "$O"/exp/default_test.log | head
grep -E "spill|error" "$O"/exp/*_build.log | head
sed 's|attention/wgmma_flash/bf16/prefill/||; s|/cold||' "$O/exp/summary.txt" 2>/dev/null | head -60
cd "$OUT" && tar czf o176.tgz o176 && rm -rf o176
