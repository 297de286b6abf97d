#!/usr/bin/env bash
# Session 62, c302: is vectorized's cold time at 64 x 8192 and 256 x 4096 (+3.9%, +3.0% in c298 against 3611a58's run,
# another GPU) the release order of 530089d? experiments/rmsnorm_pdl_trigger_before_wait.patch =1 (the old order)
# against the default build, bf16 cold and hot, 4 shapes, 3 repetitions, 4 passes; prediction in experiments/README.md.
set -u
O=$OUT/o302; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c302.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/rmsnorm_pdl_trigger_before_wait.patch BENCH=bench_rmsnorm PASSES=4 REPETITIONS=3 SHAPES=1x4096,64x8192,256x4096,1x8192 \
  BENCH_FILTER='^(rmsnorm/vectorized/bf16/.*|floor/empty_kernel(_pdl)?/.*)' \
  timeout 450 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_PDL_TRIGGER_BEFORE_WAIT=1 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/exp/summary.txt" 2>/dev/null
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]" "$O"/exp/*_test.log | head -20
tail -30 "$O/exp.log"
for f in "$O"/exp/*.json "$O"/exp/*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o302.tgz o302 && rm -rf o302
