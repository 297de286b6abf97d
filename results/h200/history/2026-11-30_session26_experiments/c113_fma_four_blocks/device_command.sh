#!/usr/bin/env bash
# Session 26, c113: (1) decode_fma_four_blocks.patch (SB_DECODE_EXPERIMENT=59) beside the default build, at five
# MHA decode shapes; (2) session 25's c112: every forced split count at MHA b64 KV 4096/16384 beside cuDNN, from
# both builds, two processes each. The GPU's UUID in gpu_start.txt.
set -u
O=$OUT/o113; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c113.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_fma_four_blocks.patch \
SHAPES=b64_hq32_hkv32_d128_q1_kv4096,b64_hq32_hkv32_d128_q1_kv16384,b16_hq32_hkv32_d128_q1_kv8192,b256_hq32_hkv32_d128_q1_kv1024,b1_hq32_hkv32_d128_q1_kv32768 \
DTYPES=bf16 timeout 330 scripts/gpu_experiments.sh "$O/x" SB_DECODE_EXPERIMENT=59 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for p in 1 2; do
  for n in default SB_DECODE_EXPERIMENT_59; do
    b=build/exp_$n/bench/bench_attention
    [ -x "$b" ] || { echo "no $b" >> "$O/exp.txt"; continue; }
    f=cuDNN; [ $n = default ] || f=none
    filt='decode_splitk.*cold'; [ $n = default ] && filt='(decode_splitk|torch_sdpa_cudnn).*cold'
    timeout 90 $b --shapes=b64_hq32_hkv32_d128_q1_kv4096,b64_hq32_hkv32_d128_q1_kv16384 --dtypes=bf16 \
      --split-sweep=all --benchmark_filter="$filt" --benchmark_repetitions=3 \
      --benchmark_display_aggregates_only=true --benchmark_out="$O/sweep_${n}_$p.json" --benchmark_out_format=json > "$O/sweep_${n}_$p.log" 2>&1
    echo "sweep $n pass $p rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
  done
done
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$O/gpu_start.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/x/summary.txt" 2>/dev/null | head -40
for f in "$O"/sweep_*.log; do echo "== $f"; grep -h "_median" "$f" | cut -c1-110; done
cd "$OUT" && tar czf o113.tgz o113 && rm -rf o113
