#!/usr/bin/env bash
# Session 34, c166: the three wgmma_flash candidates (experiments/wgmma_flash_candidates.patch) against the default, prefill bf16 cold, 2 passes;
# then fa742b4/aa06000 (libtorch-only): LayerTorch tests and bench_e2e smoke/cli ctests in the default build.
set -u
O=$OUT/o166; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c166.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
PATCH=experiments/wgmma_flash_candidates.patch TEST_FILTER='*TiledFlash*' \
  BENCH_FILTER='^attention/(wgmma_flash|torch_sdpa_cudnn)/bf16/prefill/.*/cold' SHAPES=prefill \
  timeout 420 scripts/gpu_experiments.sh "$O/exp" SB_WGMMA_FLASH_EXPERIMENT=1 SB_WGMMA_FLASH_EXPERIMENT=2 SB_WGMMA_FLASH_EXPERIMENT=3 > "$O/experiments.txt" 2>&1
t "experiments rc=$?"
timeout 90 cmake --build build/exp_default -j 16 > "$O/default_full_build.log" 2>&1; t "default full build rc=$?"
SOLBENCH_REQUIRE_GPU=1 timeout 60 build/exp_default/tests/test_gpu_torch --gtest_filter='LayerTorch*' > "$O/layertorch.log" 2>&1; t "LayerTorch rc=$? $(grep -E 'PASSED|FAILED' "$O/layertorch.log" | tail -3 | tr '\n' ' ')"
(cd build/exp_default && timeout 60 ctest -R 'bench_e2e_smoke|bench_cli' --output-on-failure) > "$O/ctest_e2e.log" 2>&1; t "ctest e2e rc=$? $(grep -E 'tests passed' "$O/ctest_e2e.log")"
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/exp/summary.txt" 2>/dev/null | head -60; grep -E "PASSED|FAILED|BUILD" "$O/experiments.txt"
cd "$OUT" && tar czf o166.tgz o166 && rm -rf o166
