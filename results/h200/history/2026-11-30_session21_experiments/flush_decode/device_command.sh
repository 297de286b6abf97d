#!/usr/bin/env bash
# Session 21, call 2.
# A. Where b1 GQA decode's cold time goes: the committed kernels, decode_splitk / SDPA cuDNN / the launch floor
#    at b1 GQA KV 1024 / 4096 / 16384, cold and hot, under the harness's default flush (memset: L2 left full
#    of dirty lines) and the experiment-only read flush (L2 left full of clean lines), alternated, 2 passes.
# B. rmsnorm_words.patch (=33) against the default, the default shapes, 2 passes, memcheck and racecheck of =33.
set -u
O=$OUT/o82; mkdir -p "$O/flush"
start=$(date +%s)
cp .devcall/s/c82.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
B=build/diag
{ cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 &&
  cmake --build $B -j 16 --target bench_attention; } > "$O/flush/build.log" 2>&1
echo "A build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for k in 1 2; do
  for m in memset read; do
    [ $k = 2 ] && { [ $m = memset ] && m=read || m=memset; }
    echo "$k $m $(nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader)" >> "$O/flush/gpu_state.txt"
    SOLBENCH_FLUSH_METHOD=$m timeout 60 $B/bench/bench_attention --dtypes=bf16 \
      --shapes=b1_hq32_hkv8_d128_q1_kv1024,b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv16384 \
      --benchmark_filter='^(attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*|floor/.*)/(cold|hot)' \
      --benchmark_repetitions=3 --benchmark_display_aggregates_only=true \
      --benchmark_out="$O/flush/${m}_pass$k.json" --benchmark_out_format=json > "$O/flush/${m}_pass$k.log" 2>&1
    echo "A pass $k $m rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
  done
done
BENCH=bench_rmsnorm PATCH=experiments/rmsnorm_words.patch SHAPES=default \
  BENCH_FILTER='^rmsnorm/(vectorized|ref_copy_kernel)/bf16/.*/(cold|hot)' \
  SANITIZE=memcheck,racecheck SANITIZE_BUILDS='SB_RMSNORM_EXPERIMENT_33' SANITIZE_TIMEOUT=200 \
  timeout $(( 575 - ($(date +%s) - start) )) scripts/gpu_experiments.sh "$O/words" SB_RMSNORM_EXPERIMENT=33 > "$O/words.log" 2>&1
echo "B rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o82.tgz o82 && rm -rf o82
