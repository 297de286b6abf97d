#!/usr/bin/env bash
# Session 60, c290: c289's cross-check (CROSSCHECK_RUNS=1, the time-saving setting since session 49) failed 5 of 62
# (small PyTorch kernels, 10-25 us, worst 6.4%). This reruns it on the same machine over the same bench JSON with the
# script's default --runs 5, to see whether the single-run setting or the run is the cause.
set -u
O=$OUT/o290; mkdir -p "$O"; start=$(date +%s)
cp .devcall/s/c290.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
ls -l results/h200/logs > "$O/before.txt" 2>&1
timeout 540 python3 scripts/crosscheck_torch.py results/h200/logs/bench_*.json -o "$O/crosscheck.json" --runs 5 \
  --filter= --anchors results/h200/anchors.json > "$O/crosscheck.log" 2>&1
echo "crosscheck runs 5 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -E "DIFFERS|passed" "$O/crosscheck.log" | cut -c1-300
cd "$OUT" && tar czf o290.tgz o290 && rm -rf o290
