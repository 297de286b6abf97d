#!/usr/bin/env bash
# Session 13, call 4, clean checkout of HEAD: a cross-check run (the PyTorch baselines the cross-check
# covers, cold, bf16, then crosscheck_torch.py) at the default 5 do_bench calls a case.
set -u
O=$OUT/o46; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c46.sh "$O/device_command.sh"
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" > "$O/exp.txt"
REPETITIONS=3 ATTENTION_SHAPES=anchors ATTENTION_DTYPES=bf16 \
  BENCH_ARGS='--dtypes=bf16 --benchmark_filter=/torch_(rms_norm|sdpa|manual).+/cold' \
  CROSSCHECK_RUNS=5 SKIP_TESTS=1 SKIP_SANITIZER=1 timeout 265 scripts/run_suite.sh > "$O/suite.log" 2>&1
echo "run_suite (cross-check run, 5 do_bench calls) rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
mkdir -p "$O/xrun" && cp results/h200/logs/*.json results/h200/logs/env.txt "$O/xrun/" 2>/dev/null
cd "$OUT" && tar czf o46.tgz o46 && rm -rf o46
