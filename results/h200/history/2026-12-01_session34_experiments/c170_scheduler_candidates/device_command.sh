#!/usr/bin/env bash
# Session 34, c170: experiments/wgmma_flash_scheduler.patch (=4 persistent blocks fed by a global counter, =5 the same code one item a
# block) against the default, prefill bf16 cold, one pass (the session's last device seconds).
set -u
O=$OUT/o170; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c170.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
PATCH=experiments/wgmma_flash_scheduler.patch TEST_FILTER='*TiledFlash*' PASSES=1 \
  BENCH_FILTER='^attention/(wgmma_flash|torch_sdpa_cudnn)/bf16/prefill/.*/cold' SHAPES=prefill \
  timeout 250 scripts/gpu_experiments.sh "$O/exp" SB_WGMMA_FLASH_EXPERIMENT=4 SB_WGMMA_FLASH_EXPERIMENT=5 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "PASSED|FAILED|BUILD" "$O/experiments.txt"; grep -E "FAILED|Failure" "$O"/exp/*_test.log | head -10
sed 's|attention/wgmma_flash/bf16/prefill/||; s|/cold||' "$O/exp/summary.txt" 2>/dev/null | grep -v torch_sdpa | head -100
cd "$OUT" && tar czf o170.tgz o170 && rm -rf o170
