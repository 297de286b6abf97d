#!/usr/bin/env bash
# Session 22, call 5 (diagnostic of =59's loss): decode_splitk_send_width.patch, the clustered merge's 16-byte
# st.async sends split into 2 x 8 bytes (=60) or 4 x 4 bytes (=61): the same bytes, 2x / 4x the complete_tx
# updates on each owner's mbarrier. b1 GQA KV 1024 / 4096 (8 clustered splits), forced 4 splits at KV 4096,
# cold and hot; two passes; memcheck and racecheck of both over the clustered tests at KV 4096.
set -u
O=$OUT/o91; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c91.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_splitk_send_width.patch TEST_FILTER='*DecodeSplitk*' \
  SHAPES=b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv4096 \
  BENCH_FILTER='^attention/(decode_splitk|decode_splitk_s4)/.*_q1_.*/(cold|hot)' \
  SANITIZE=memcheck,racecheck SANITIZE_SHARDS=4 SANITIZE_TIMEOUT=100 \
  SANITIZE_FILTER='*DecodeSplitk*kv4096*' RACECHECK_FILTER='*DecodeSplitk*kv4096*splits0:*DecodeSplitk*splits8*' \
  timeout 230 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=60 SB_DECODE_EXPERIMENT=61 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o91.tgz o91 && rm -rf o91
