#!/usr/bin/env bash
# Session 54, c258: the K/V read-order probe (results/h200/history/2026-12-02_session54_experiments/kv_read_patterns.cu),
# 30 cold launches a mode a round, 3 rounds, modes interleaved in a shuffled order.
set -u
O=$OUT/o258; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c258.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
D=results/h200/history/2026-12-02_session54_experiments
nvcc -O3 -arch=sm_90a -Xptxas -v -o /tmp/kvp $D/kv_read_patterns.cu > "$O/build.log" 2>&1; echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
timeout 400 /tmp/kvp 30 3 > "$O/probe.csv" 2> "$O/probe.err"; echo "probe rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt" "$O/probe.err"; column -s, -t "$O/probe.csv"
