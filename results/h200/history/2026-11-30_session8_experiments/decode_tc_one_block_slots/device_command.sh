#!/usr/bin/env bash
set -u
O=/tmp/o13; mkdir -p "$O"
start=$(date +%s)
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
PATCH="experiments/decode_splitk_tensor_core_exact.patch experiments/decode_splitk_tc_one_block_slots.patch" \
  SHAPES=anchors,b4_hq32_hkv8_d128_q1_kv131072 \
  BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/cold' \
  timeout 260 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=14 > "$O/exp.log" 2>&1
log "experiments rc=$?"
B=build/exp_SB_DECODE_EXPERIMENT_14
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/tests/test_gpu --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_14.log" 2>&1
log "memcheck rc=$?"
el=$(( $(date +%s) - start ))
timeout $(( 550 - el )) compute-sanitizer --tool racecheck --error-exitcode 1 $B/tests/test_gpu --gtest_filter='*DecodeSplitk*' > "$O/racecheck_14.log" 2>&1
log "racecheck rc=$?"
tar czf "$OUT/o13.tgz" -C /tmp o13
