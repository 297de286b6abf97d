#!/usr/bin/env bash
# Session 11, call 3, on a clean checkout of HEAD: (1) a cross-check run (the PyTorch baselines the
# cross-check covers, cold, bf16, then crosscheck_torch.py); (2) the README's test command; (3) memcheck
# over the decode tests (the cluster merge is the default).
set -u
O=$OUT/o37; mkdir -p "$O"
start=$(date +%s); R=$PWD
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" > "$O/exp.txt"
cp "$R/.devcall/s/c37.sh" "$O/device_command.sh"
REPETITIONS=3 ATTENTION_SHAPES=anchors ATTENTION_DTYPES=bf16 \
  BENCH_ARGS='--dtypes=bf16 --benchmark_filter=/torch_(rms_norm|sdpa|manual).+/cold' \
  CROSSCHECK_RUNS=1 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 240 scripts/run_suite.sh > "$O/suite.log" 2>&1
log "run_suite (cross-check run) rc=$?"
mkdir -p "$O/xrun" && cp results/h200/logs/*.json results/h200/logs/env.txt "$O/xrun/" 2>/dev/null; ls results/h200/*.json >> "$O/exp.txt"
timeout 280 cmake --workflow --preset ci > "$O/readme_test.log" 2>&1
log "cmake --workflow --preset ci rc=$?"
el=$(( $(date +%s) - start ))
SOLBENCH_REQUIRE_GPU=1 timeout $(( 570 - el )) compute-sanitizer --tool memcheck --error-exitcode 1 build/ci/tests/test_gpu \
  --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_decode.log" 2>&1
log "memcheck decode rc=$?"
