#!/usr/bin/env bash
# Session 38, c190: experiments/wgmma_flash_first_visit.patch (after wgmma_flash_dead_halves.patch): =FIRST_VISIT alone and
# with the dead halves everywhere (SB_WGMMA_FLASH_EXPERIMENT=1), against the default over the 30 prefill shapes, bf16 cold,
# two passes; the tests of each build; memcheck and racecheck over the first-visit build's wgmma_flash tests.
set -u
O=$OUT/o190; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c190.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
PATCH="experiments/wgmma_flash_dead_halves.patch experiments/wgmma_flash_first_visit.patch" \
  TEST_FILTER='*TiledFlash*:WgmmaFlash*' BENCH_FILTER='^attention/wgmma_flash/bf16/prefill/.*/cold' SHAPES=prefill \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS=SB_WGMMA_FLASH_FIRST_VISIT_1 SANITIZE_FILTER='*wgmma_flash*' \
  RACECHECK_FILTER='*MatchesReference*wgmma_flash*' SANITIZE_TIMEOUT=120 \
  timeout 240 scripts/gpu_experiments.sh "$O/exp" SB_WGMMA_FLASH_FIRST_VISIT=1 "SB_WGMMA_FLASH_FIRST_VISIT=1 -DSB_WGMMA_FLASH_EXPERIMENT=1" > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"
grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -v '^attention' | head -20
sed 's|attention/wgmma_flash/bf16/prefill/||; s|/cold||' "$O/exp/summary.txt" 2>/dev/null | grep SB_ | head -70
cd "$OUT" && tar czf o190.tgz o190 && rm -rf o190
