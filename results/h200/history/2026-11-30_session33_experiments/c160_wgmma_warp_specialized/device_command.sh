#!/usr/bin/env bash
# Session 33, c160: wgmma_flash warp-specialized (a cp.async producer warpgroup, mbarriers) with ping-pong MMA issue between its two consumer warpgroups.
set -u
O=$OUT/o160; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c160.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha) timeout 300 cmake --build build/release -j 16 > "$O/build.log" 2>&1; t "build rc=$?"
grep -E "error|warning" "$O/build.log" | head -20 >> "$O/exp.txt"
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu --gtest_filter='*wgmma_flash*:TiledFlash.*' > "$O/tests_wgmma.log" 2>&1; t "wgmma tests rc=$? $(grep -E 'PASSED|FAILED' "$O/tests_wgmma.log" | tail -2 | tr '\n' ' ')"
grep -E "FAILED|Failure|err" "$O/tests_wgmma.log" | head -30 >> "$O/exp.txt"
timeout 150 build/release/bench/bench_attention --shapes=anchors --dtypes=bf16 \
  --benchmark_filter='attention/(tiled_flash|wgmma_flash|torch_sdpa_flash|torch_sdpa_cudnn)/bf16/prefill/.*/cold' \
  --benchmark_out="$O/prefill.json" --benchmark_out_format=json > "$O/prefill.txt" 2>&1; t "prefill bench rc=$?"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E '/cold ' "$O/prefill.txt" | head -30
cd "$OUT" && tar czf o160.tgz o160 && rm -rf o160
