#!/usr/bin/env bash
# Session 21, call 1: decode_splitk_cluster_stages.patch, =55 (clustered tensor-core kernel at d128 with 6
# stages, 192 KB of K and V in flight, 208 KB of shared memory) and =56 (5 stages) against the default (3),
# b1 GQA KV 1024 / 4096 / 16384 (the last not clustered: a control), cold and hot, cuDNN and the launch floor
# beside them; two passes; memcheck and racecheck of =55 over the decode tests.
set -u
O=$OUT/o81; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c81.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_splitk_cluster_stages.patch TEST_FILTER='*DecodeSplitk*' \
  SHAPES=b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv16384 \
  BENCH_FILTER='^(attention/(decode_splitk|decode_splitk_s4|decode_splitk_s8|torch_sdpa_cudnn)/.*_q1_.*|floor/.*)/(cold|hot)' \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS='SB_DECODE_EXPERIMENT_55' SANITIZE_TIMEOUT=200 \
  RACECHECK_FILTER='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*' \
  timeout 540 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=55 SB_DECODE_EXPERIMENT=56 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o81.tgz o81 && rm -rf o81
