#!/usr/bin/env bash
# Session 33, c161: wgmma_flash (warp-specialized, ping-pong) at 2 stages (default) and 3 (SB_WGMMA_FLASH_STAGES=3),
# the prefill anchors side by side, then compute-sanitizer memcheck and racecheck over its GPU tests (2 stages).
set -u
O=$OUT/o161; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c161.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
SHA=$(cat .devcall/s/sha)
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && SOLBENCH_GIT_COMMIT=$SHA timeout 300 cmake --build build/release -j 16 > "$O/build.log" 2>&1; t "build rc=$?"
cmake -S . -B build/s3 -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 -DCMAKE_CUDA_FLAGS=-DSB_WGMMA_FLASH_STAGES=3 > "$O/configure_s3.log" 2>&1 \
  && SOLBENCH_GIT_COMMIT=$SHA timeout 300 cmake --build build/s3 -j 16 --target bench_attention test_gpu > "$O/build_s3.log" 2>&1; t "build s3 rc=$?"
F='attention/(tiled_flash|wgmma_flash|torch_sdpa_cudnn)/bf16/prefill/.*/cold'
for pass in 1 2; do
  for b in release s3; do
    timeout 100 build/$b/bench/bench_attention --shapes=anchors --dtypes=bf16 --benchmark_filter="$F" \
      --benchmark_out="$O/prefill_${b}_$pass.json" --benchmark_out_format=json > "$O/prefill_${b}_$pass.txt" 2>&1; t "bench $b pass $pass rc=$?"
  done
done
SOLBENCH_REQUIRE_GPU=1 timeout 60 build/s3/tests/test_gpu --gtest_filter='*wgmma_flash*' > "$O/tests_s3.log" 2>&1; t "s3 tests rc=$? $(grep -E 'PASSED|FAILED' "$O/tests_s3.log" | tail -2 | tr '\n' ' ')"
SOLBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 build/release/tests/test_gpu --gtest_filter='*wgmma_flash*' > "$O/memcheck.log" 2>&1; t "memcheck rc=$? $(tail -1 "$O/memcheck.log")"
SOLBENCH_REQUIRE_GPU=1 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 build/release/tests/test_gpu --gtest_filter='*MatchesReference*wgmma_flash*' > "$O/racecheck.log" 2>&1; t "racecheck rc=$? $(tail -1 "$O/racecheck.log")"
cat "$O/exp.txt" "$O/gpu_start.txt"
for f in "$O"/prefill_*.txt; do echo "$f"; grep '/cold/' "$f" | awk '{print $1, $2}'; done
cd "$OUT" && tar czf o161.tgz o161 && rm -rf o161
