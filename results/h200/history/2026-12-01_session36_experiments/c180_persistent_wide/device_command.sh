#!/usr/bin/env bash
# Session 36, c180: experiments/wgmma_flash_persistent_wide.patch (=1: the persistent kernel's Q by TMA; =10: and
# persistent blocks with three warpgroups at D 64 and at D 128) against the default, prefill bf16 cold, two passes;
# each build's tests; racecheck over =10's wgmma_flash reference checks. Short: the session's device time is nearly spent.
set -u
O=$OUT/o180; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c180.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
PATCH=experiments/wgmma_flash_persistent_wide.patch TEST_FILTER='*TiledFlash*:WgmmaFlash*' \
  BENCH_FILTER='^attention/wgmma_flash/bf16/prefill/.*/cold' SHAPES=prefill \
  SANITIZE=racecheck SANITIZE_BUILDS=SB_WGMMA_FLASH_EXPERIMENT_10 RACECHECK_FILTER='*MatchesReference*wgmma_flash*' SANITIZE_TIMEOUT=90 \
  timeout 225 scripts/gpu_experiments.sh "$O/exp" SB_WGMMA_FLASH_EXPERIMENT=1 SB_WGMMA_FLASH_EXPERIMENT=10 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -v '^attention' | head -20
grep -E "FAILED|Failure" "$O"/exp/*_test.log | head -10
sed 's|attention/wgmma_flash/bf16/prefill/||; s|/cold||' "$O/exp/summary.txt" 2>/dev/null | grep SB_ | head -70
cd "$OUT" && tar czf o180.tgz o180 && rm -rf o180
