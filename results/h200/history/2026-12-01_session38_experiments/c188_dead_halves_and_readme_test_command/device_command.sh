#!/usr/bin/env bash
# Session 38, c188: experiments/wgmma_flash_dead_halves.patch (=1) against the default over the 30 prefill shapes, bf16
# cold, two passes; its tests, memcheck over its wgmma_flash tests and racecheck over their reference checks; then
# the README's test command (cmake --workflow --preset ci) on the H200 at this commit.
set -u
O=$OUT/o188; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c188.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
PATCH=experiments/wgmma_flash_dead_halves.patch TEST_FILTER='*TiledFlash*:WgmmaFlash*' \
  BENCH_FILTER='^attention/wgmma_flash/bf16/prefill/.*/cold' SHAPES=prefill \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS=SB_WGMMA_FLASH_EXPERIMENT_1 SANITIZE_FILTER='*wgmma_flash*' \
  RACECHECK_FILTER='*MatchesReference*wgmma_flash*' SANITIZE_TIMEOUT=200 \
  timeout 300 scripts/gpu_experiments.sh "$O/exp" SB_WGMMA_FLASH_EXPERIMENT=1 > "$O/experiments.txt" 2>&1
t "experiments rc=$?"
git status --short > "$O/tree_status.txt" 2>&1
rm -rf build/ci
left=$(( 585 - ($(date +%s) - start) ))
timeout $left cmake --workflow --preset ci > "$O/workflow.log" 2>&1
t "workflow rc=$?"
cp build/ci/Testing/Temporary/LastTest.log "$O/" 2>/dev/null; gzip -9 -n "$O/LastTest.log" "$O/workflow.log" 2>/dev/null
cat "$O/exp.txt" "$O/gpu_start.txt"
grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -v '^attention' | head -20
sed 's|attention/wgmma_flash/bf16/prefill/||; s|/cold||' "$O/exp/summary.txt" 2>/dev/null | grep SB_ | head -40
zcat "$O/workflow.log.gz" | grep -E "tests passed|tests failed|Total Test time" ; zcat "$O/workflow.log.gz" | grep -E "\(Failed\)|\(Not Run\)" | head
echo "skipped: $(zcat "$O/workflow.log.gz" | grep -c '(Skipped)')"
cd "$OUT" && tar czf o188.tgz o188 && rm -rf o188
