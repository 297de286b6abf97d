#!/usr/bin/env bash
# Session 16, call 2: rmsnorm_w_early.patch (=24 w into registers with x, =25 w prefetched to L1, =26 =25 with x
# L1::no_allocate) against the default at 4096x16384, 16384x4096, 2048x2048; then memcheck of =24.
set -u
O=$OUT/o56; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c56.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
echo "tree $(git rev-parse --short HEAD)" > "$O/exp.txt"
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_w_early.patch SHAPES=4096x16384,16384x4096,2048x2048 \
  BENCH_FILTER='^rmsnorm/(vectorized|ref_copy|torch_rms_norm)/bf16/.*/(cold|hot)' \
  timeout 450 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=24 SB_RMSNORM_EXPERIMENT=25 SB_RMSNORM_EXPERIMENT=26 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for n in 24 25; do
  t=$(( 560 - ($(date +%s) - start) ))
  [ "$t" -gt 20 ] || break
  b=build/exp_SB_RMSNORM_EXPERIMENT_$n/tests/test_gpu
  SOLBENCH_REQUIRE_GPU=1 timeout $t compute-sanitizer --tool memcheck --error-exitcode 9 $b --gtest_filter='*RmsNorm*' --gtest_brief=1 > "$O/memcheck_$n.log" 2>&1
  echo "memcheck $n rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
cd "$OUT" && tar czf o56.tgz o56 && rm -rf o56
