#!/usr/bin/env bash
# Session 33, c158: wgmma_flash's first build and GPU tests; the prefill anchors beside tiled_flash and SDPA;
# 1aff1db/a06ad40's libtorch files (LayerTorch tests, bench_e2e smoke).
set -u
O=$OUT/o158; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c158.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha) timeout 300 cmake --build build/release -j 16 > "$O/build.log" 2>&1; t "build rc=$?"
grep -E "error|warning" "$O/build.log" | head -20 >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu --gtest_filter='*wgmma_flash*:TiledFlash.*' > "$O/tests_wgmma.log" 2>&1; t "wgmma tests rc=$? $(grep -E 'PASSED|FAILED' "$O/tests_wgmma.log" | tail -2 | tr '\n' ' ')"
grep -E "FAILED|Failure|err" "$O/tests_wgmma.log" | head -30 >> "$O/exp.txt"
timeout 150 build/release/bench/bench_attention --shapes=anchors --dtypes=bf16 \
  --benchmark_filter='attention/(tiled_flash|wgmma_flash|torch_sdpa_flash|torch_sdpa_cudnn)/bf16/prefill/.*/cold' \
  --benchmark_out="$O/prefill.json" --benchmark_out_format=json > "$O/prefill.txt" 2>&1; t "prefill bench rc=$?"
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu_torch --gtest_filter='LayerTorch*' > "$O/tests_layer.log" 2>&1; t "LayerTorch rc=$? $(grep -E 'PASSED|FAILED' "$O/tests_layer.log" | tail -2 | tr '\n' ' ')"
(cd build/release && timeout 100 ctest -R 'bench_e2e_smoke|bench_cli' > "$O/ctest_e2e.log" 2>&1); t "ctest e2e rc=$? $(grep 'tests passed' "$O/ctest_e2e.log")"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E '/cold ' "$O/prefill.txt" | head -30
cd "$OUT" && tar czf o158.tgz o158 && rm -rf o158
