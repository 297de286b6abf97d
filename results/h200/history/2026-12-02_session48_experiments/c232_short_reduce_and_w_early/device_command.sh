#!/usr/bin/env bash
# Session 48, c232: experiments/rmsnorm_decode_short_reduce.patch (bit 1: the decode kernel's block sum by fewer
# shuffle levels and 16 partials summed as a tree; bit 2, a measurement: w loaded before the PDL wait; 3: both)
# against the default, three passes over decode-sized shapes, cold and hot (protocol v378, hot net of G), with
# ref_copy and the empty kernels as controls; each build's RMSNorm GPU tests first; the SASS of the 1 x 4096 kernel.
set -u
O=$OUT/o232; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c232.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_decode_short_reduce.patch TEST_FILTER='*RmsNorm*' PASSES=3 \
  SHAPES=1x4096,1x8192,7x4096,64x4096,64x8192,256x4096 BENCH_FILTER='^(rmsnorm/(vectorized|ref_copy)/|floor/empty)' \
  timeout 520 scripts/gpu_experiments.sh "$O/exp" SB_RMSNORM_EXPERIMENT=1 SB_RMSNORM_EXPERIMENT=2 SB_RMSNORM_EXPERIMENT=3 > "$O/experiments.txt" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for n in default SB_RMSNORM_EXPERIMENT_1; do
  o=$(find build/exp_$n -name 'vectorized.cu.o' | head -1)
  cuobjdump -sass -fun '_ZN2sb7rmsnorm10vectorized13kernel_decodeI13__nv_bfloat16Li4ELi4ELb1ELi4EEEvPKT_S6_PS4_iff' "$o" > "$O/sass_1x4096_$n.txt" 2>&1
done
echo "sass at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -vE '^[0-9]+ (default|SB_)' "$O/experiments.txt" | grep -vE '^(rmsnorm|floor)/' | head -30
grep -E "FAILED|Failure" "$O"/exp/*_test.log | head -10
cat "$O/exp/summary.txt" 2>/dev/null | head -120
wc -l "$O"/sass_*.txt
cd "$OUT" && tar czf o232.tgz o232 && rm -rf o232
