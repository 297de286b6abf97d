#!/usr/bin/env bash
# Session 50, c244: compute-sanitizer memcheck and racecheck over every attention GPU test of test_gpu (decode_splitk,
# wgmma_flash, tiled_flash, manual, ref_kv_read's check, the references), at the current commit's kernels (9219b4f's),
# 4 shards a tool, the 8 processes together, each cut at the time left.
set -u
O=$OUT/o244; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c244.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake --preset release -DSOLBENCH_WITH_TORCH=OFF > "$O/configure.log" 2>&1; t "configure rc=$?"
cmake --build --preset release --target test_gpu > "$O/build.log" 2>&1; t "build rc=$?"
F='*Attention*:*DecodeSplitk*:*TiledFlash*:*WgmmaFlash*'
build/release/tests/test_gpu --gtest_filter="$F" --gtest_list_tests | grep -c '^  ' > "$O/n_tests.txt"
left=$(( 400 - ($(date +%s) - start) ))
pids=""
for tool in memcheck racecheck; do
  for k in 0 1 2 3; do
    GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k timeout $left compute-sanitizer --tool $tool --error-exitcode 1 \
      build/release/tests/test_gpu --gtest_filter="$F" --gtest_brief=1 > "$O/san_${tool}_$k.log" 2>&1 &
    pids="$pids $!"
  done
done
for p in $pids; do wait $p; echo "sanitizer pid $p rc=$?" >> "$O/exp.txt"; done
t "sanitizers done"
for f in "$O"/san_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|SKIPPED \]' $f | head -4 | tr '\n' ' ')" >> "$O/exp.txt"; done
cat "$O/exp.txt" "$O/n_tests.txt"
for f in "$O"/san_*.log; do gzip -9 -n "$f"; done
cd "$OUT" && tar czf o244.tgz o244 && rm -rf o244
