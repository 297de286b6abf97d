#!/usr/bin/env bash
# Session 12, call 3: (1) timing probe with CUPTI: is do_bench's / the continuous queue's extra ~0.8 us in
# the kernel or in the events' window? (2) the README's test command in a clean checkout of HEAD.
set -u
O=$OUT/o40; mkdir -p "$O"
start=$(date +%s); R=$PWD
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c40.sh "$O/device_command.sh"
timeout 100 python3 scripts/timing_probe.py -o "$O/probe_cupti.json" --shapes 1x4096,256x4096,2048x2048 \
  --protocols do_bench,loop_sync,harness_b4,ahead_16 --calls rms_norm --rounds 2 --cupti > "$O/probe_cupti.log" 2>&1
log "timing_probe --cupti rc=$?"
rm -rf /tmp/sh && mkdir -p /tmp/sh && tar xzf .devcall/s/shallow.tgz -C /tmp/sh && cd /tmp/sh && git checkout -q -f HEAD
echo "clean checkout of $(git rev-parse --short HEAD)" >> "$O/exp.txt"
el=$(( $(date +%s) - start ))
timeout $(( 480 - el )) cmake --workflow --preset ci > "$O/readme_test.log" 2>&1
log "cmake --workflow --preset ci rc=$?"
grep -E "tests passed|tests failed|^spin|^clock|^copy|H200" "$O/readme_test.log" >> "$O/exp.txt"
gzip -f "$O/readme_test.log"
