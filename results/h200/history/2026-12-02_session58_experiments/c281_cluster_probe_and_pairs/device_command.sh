#!/usr/bin/env bash
# Session 58, c281: (1) cluster_probe.cu: cudaOccupancyMaxActiveClusters for clusters of 1-16 blocks at 0-200 KB of
# shared memory, 128 threads, and the start and end (globaltimer, smid) of each block of a 128-block grid of clusters
# of 1, 2 and 4 at 116 KB; (2) experiments/decode_lockstep_clusters.patch =66 (clusters of 2 kv heads, a barrier every
# tile) against the default build: the 128 decode GPU tests of both, three one-wave shapes, bf16, cold, 3 repetitions,
# two passes, SDPA cuDNN beside them; memcheck of =66 over the tests that take its path. Prediction committed first
# (experiments/README.md, the commit in sha.txt).
set -u
O=$OUT/o281; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c281.sh "$O/device_command.sh"; cp .devcall/s/cluster_probe.cu "$O/"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
nvcc -arch=sm_90a -O2 -o /tmp/cluster_probe .devcall/s/cluster_probe.cu > "$O/probe.txt" 2>&1 && /tmp/cluster_probe >> "$O/probe.txt" 2>&1
echo "probe rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/probe.txt"
PATCH='experiments/decode_lockstep_clusters.patch' TEST_FILTER='*DecodeSplitk*' REPETITIONS=3 \
  SHAPES=b16_hq32_hkv8_d128_q1_kv32768,b8_hq64_hkv16_d128_q1_kv32768,b32_hq16_hkv4_d128_q1_kv32768 \
  BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/bf16/decode/.*/cold' \
  SANITIZE=memcheck SANITIZE_BUILDS='SB_DECODE_EXPERIMENT_66' SANITIZE_TIMEOUT=100 \
  SANITIZE_FILTER='*DecodeSplitk*splits1_*:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*' \
  timeout 400 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=66 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/exp/summary.txt" 2>/dev/null
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]" "$O"/exp/*_test.log | head -20
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$O"/exp/*check*.log | sort | uniq -c
tail -8 "$O/exp.log"
for f in "$O"/exp/*.json "$O"/exp/*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o281.tgz o281 && rm -rf o281
