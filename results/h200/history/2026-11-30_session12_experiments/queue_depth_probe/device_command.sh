#!/usr/bin/env bash
# Session 12, call 1: (1) timing probe: do_bench's offset at ~10 us against queue depth (ahead_N);
# (2) the 8-warp decode patch (=20, =21) against the default, two passes, with Nsight Compute at b1 KV 4096.
set -u
O=$OUT/o38; mkdir -p "$O"
start=$(date +%s)
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c38.sh "$O/device_command.sh"
git log --oneline -1 > "$O/exp.txt"
nvidia-smi --query-gpu=temperature.gpu,power.draw,clocks.sm,clocks.mem --format=csv >> "$O/exp.txt"
timeout 120 python3 scripts/timing_probe.py -o "$O/probe.json" --shapes 256x4096,2048x2048,8192x768 \
  --protocols do_bench,loop,loop_sync,harness_b4,ahead_16,ahead_64,ahead_256,ahead_1024 --calls rms_norm --rounds 3 > "$O/probe.log" 2>&1
log "timing_probe rc=$?"
el=$(( $(date +%s) - start ))
PATCH=experiments/decode_splitk_tc_8warps.patch TEST_FILTER='*DecodeSplitk*' \
  SHAPES=anchors,b1_hq32_hkv8_d128_q1_kv1024,b256_hq32_hkv8_d128_q1_kv1024 \
  BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/cold' NCU_SHAPES=b1_hq32_hkv8_d128_q1_kv4096 \
  timeout $(( 560 - el )) scripts/gpu_experiments.sh "$O/exp8" SB_DECODE_EXPERIMENT=20 SB_DECODE_EXPERIMENT=21 > "$O/exp8.log" 2>&1
log "gpu_experiments rc=$?"
for f in "$O"/exp8/ncu_*.csv; do [ -f "$f" ] && gzip -f "$f"; done
