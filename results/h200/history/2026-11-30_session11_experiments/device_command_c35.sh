#!/usr/bin/env bash
# Session 11, call 1: (a) the narrowed cluster merge (=26) beside the default, its racecheck;
# (b) the cross-check's held variant at the harness's amount of work, and a clock probe.
set -u
O=/tmp/o35; mkdir -p "$O"
start=$(date +%s)
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
echo "working tree of $(git rev-parse --short HEAD 2>/dev/null) + uncommitted crosscheck change" > "$O/exp.txt"
PATCH=experiments/decode_splitk_cluster_merge.patch \
  SHAPES=anchors,b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv16384,b4_hq32_hkv8_d128_q1_kv131072 \
  BENCH_FILTER='^attention/(decode_splitk|decode_splitk_s[0-9]+|torch_sdpa_cudnn)/.*_q1_.*/(cold|hot)' \
  timeout 280 scripts/gpu_experiments.sh "$O/exp26" SB_DECODE_EXPERIMENT=26 > "$O/exp26.log" 2>&1
log "gpu_experiments rc=$?"
timeout 90 cmake --build build/exp_default -j 16 --target bench_rmsnorm > "$O/build_rms.log" 2>&1
log "bench_rmsnorm build rc=$?"
timeout 90 build/exp_default/bench/bench_attention --dtypes=bf16 \
  --shapes=b1_hq32_hkv32_d128_q16384_kv16384_causal,b4_hq32_hkv32_d128_q4096_kv4096_causal,b4_hq32_hkv32_d128_q4096_kv4096,b1_hq32_hkv8_d128_q1_kv4096 \
  --benchmark_filter='^attention/torch_sdpa_(cudnn|flash)/.*/cold' --benchmark_repetitions=3 \
  --benchmark_out="$O/h_att.json" --benchmark_out_format=json > "$O/h_att.log" 2>&1
log "harness attention rc=$?"
timeout 60 build/exp_default/bench/bench_rmsnorm --dtypes=bf16 --shapes=256x4096,1x4096,64x8192,4096x16384 \
  --benchmark_filter='^rmsnorm/torch_rms_norm/.*/cold' --benchmark_repetitions=3 \
  --benchmark_out="$O/h_rms.json" --benchmark_out_format=json > "$O/h_rms.log" 2>&1
log "harness rmsnorm rc=$?"
timeout 90 python3 scripts/crosscheck_torch.py "$O/h_att.json" "$O/h_rms.json" --runs 1 -o "$O/xc.json" > "$O/xc.log" 2>&1
log "crosscheck rc=$?"
timeout 100 python3 .devcall/s/probe_clock.py "$O/probe_clock.json" > "$O/probe_clock.log" 2>&1
log "probe rc=$?"
T=build/exp_SB_DECODE_EXPERIMENT_26/tests/test_gpu
F='*DecodeSplitk*splits3*:*DecodeSplitk*splits7*:*DecodeSplitk*splits8*:*DecodeSplitk*kv4096*splits0:*DecodeSplitkExtreme*:*DecodeSplitk.RepeatedRuns*:*DecodeSplitk*Cluster*'
SOLBENCH_REQUIRE_GPU=1 $T --gtest_filter="$F" --gtest_list_tests > "$O/racecheck26_tests.txt" 2>&1
el=$(( $(date +%s) - start ))
SOLBENCH_REQUIRE_GPU=1 timeout $(( 575 - el )) compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 1 $T --gtest_filter="$F" --gtest_brief=1 > "$O/racecheck26.log" 2>&1
log "racecheck26 rc=$?"
cp .devcall/s/c35.sh .devcall/s/probe_clock.py "$O/"
tar czf "$OUT/o35.tgz" -C /tmp o35
