#!/usr/bin/env bash
# Session 52, c252: racecheck over DecodeSplitk.RepeatedRunsAreBitIdentical alone (b2 GQA 32/8 d128 bf16 KV 32768 at
# 0, 1 and 130 splits, each launched twice): the one attention GPU test with no MatchesReference twin, never
# racechecked (c245's shard 3 spent its 470 s in it among 14 processes). One process, nothing else on the GPU.
set -u
O=$OUT/o252; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c252.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cat .devcall/s/sha > "$O/sha.txt" 2>/dev/null
cmake --preset release -DSOLBENCH_WITH_TORCH=OFF > "$O/configure.log" 2>&1; t "configure rc=$?"
cmake --build --preset release --target test_gpu > "$O/build.log" 2>&1; t "build rc=$?"
left=$(( 575 - ($(date +%s) - start) ))
echo "racecheck limit ${left} s" >> "$O/exp.txt"
RACECHECK_FILTER='DecodeSplitk.RepeatedRunsAreBitIdentical' SHARDS=1 TIMEOUT=$left \
  scripts/sanitize.sh build/release/tests/test_gpu "$O/san" racecheck 'DecodeSplitk.RepeatedRunsAreBitIdentical' > "$O/sanitize.txt" 2>&1
t "sanitize.sh rc=$?"
cat "$O/exp.txt" "$O/sanitize.txt"; tail -5 "$O"/san_racecheck_0.log
for f in "$O"/*.log; do [ $(stat -c %s "$f") -gt 8192 ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o252.tgz o252 && rm -rf o252
