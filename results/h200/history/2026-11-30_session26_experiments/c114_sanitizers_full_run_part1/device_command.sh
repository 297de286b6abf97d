#!/usr/bin/env bash
# Session 26, c114: b2657aa (=59 adopted). Build (Release, as gpu_run.sh does); compute-sanitizer memcheck over
# every decode GPU test (4 shards) and racecheck over the MHA one-row tests and the extreme/repeat/cluster
# selection (4 shards), concurrently; then part 1 of the full bf16 run: bench_rmsnorm (BENCHES=bench_rmsnorm).
set -u
O=$OUT/o114; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c114.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
rm -rf results/h200/logs
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 250 cmake --build build/release -j 16 > "$O/build.log" 2>&1; t "build rc=$?"
T=build/release/tests/test_gpu
RF='*DecodeSplitkShapes*hq8_hkv8_d128_q1*:*DecodeSplitkShapes*hq5_hkv5*:*AttentionGpu*decode_splitk*hq1_hkv1_d64_q1_kv1:*DecodeSplitk.RepeatedRuns*:*DecodeSplitkExtreme*:*DecodeSplitkForced*splits3_*'
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='*DecodeSplitk*:*AttentionGpu*decode_splitk*' --gtest_brief=1 > "$O/memcheck_$k.log" 2>&1 &
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter="$RF" --gtest_brief=1 > "$O/racecheck_$k.log" 2>&1 &
done
wait
for f in "$O"/memcheck_*.log "$O"/racecheck_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -E 'PASSED|FAILED' $f | tail -1)" >> "$O/exp.txt"; done
t "sanitizers done"
left=$(( 585 - ($(date +%s) - start) ))
SOLBENCH_GIT_COMMIT=b2657aa5e869f6eb926c55d0c70b0e7fe37f4ee2 BENCHES=bench_rmsnorm REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
  SKIP_CROSSCHECK=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite1.log" 2>&1
t "run_suite part 1 rc=$? (limit $left s)"
mkdir -p "$O/run1" && cp results/h200/logs/*.json results/h200/logs/*.txt results/h200/logs/*.log "$O/run1/" 2>/dev/null
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite1.log"; tail -3 "$O/suite1.log"
cd "$OUT" && tar czf o114.tgz o114 && rm -rf o114
