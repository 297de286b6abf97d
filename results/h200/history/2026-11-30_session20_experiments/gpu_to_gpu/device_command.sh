#!/usr/bin/env bash
# Session 20, call 5: on whichever H200 this is (its uuid recorded), the default against SB_DECODE_EXPERIMENT=1
# (the FMA kernel at 6 stages) cold at four large decode shapes, cuDNN beside, two passes in alternating order;
# then Nsight Compute (full set, clean caches) of decode_splitk's and cuDNN's kernels at MHA b64 KV 4096.
set -u
O=$OUT/o77; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c77.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
{ cmake --preset release && cmake --build --preset release --target bench_attention; } > "$O/build.log" 2>&1 &
{ cmake -S . -B build/e1 -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_CUDA_FLAGS=-DSB_DECODE_EXPERIMENT=1 -DCMAKE_CXX_FLAGS=-DSB_DECODE_EXPERIMENT=1 && cmake --build build/e1 --target bench_attention; } > "$O/build_e1.log" 2>&1 &
wait
echo "builds at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
S=b64_hq32_hkv8_d128_q1_kv16384,b64_hq32_hkv32_d128_q1_kv4096,b64_hq32_hkv32_d128_q1_kv16384,b16_hq32_hkv8_d128_q1_kv32768
run() {  # build tag filter
  timeout 90 "$1/bench/bench_attention" --dtypes=bf16 --shapes=$S --benchmark_filter="$3" --benchmark_repetitions=3 \
    --benchmark_out="$O/$2.json" --benchmark_out_format=json > "$O/$2.log" 2>&1
  echo "$2 rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
}
run build/release p1_default '^attention/(decode_splitk|torch_sdpa_cudnn)/bf16/decode/.*/cold'
run build/e1 p1_e1 '^attention/decode_splitk/bf16/decode/.*/cold'
run build/e1 p2_e1 '^attention/decode_splitk/bf16/decode/.*/cold'
run build/release p2_default '^attention/(decode_splitk|torch_sdpa_cudnn)/bf16/decode/.*/cold'
for c in decode_splitk torch_sdpa_cudnn; do
  left=$(( 560 - ($(date +%s) - start) ))
  [ $left -lt 40 ] && { echo "stopped before ncu $c" >> "$O/exp.txt"; break; }
  timeout $left ncu --clock-control none --cache-control all --set full -k 'regex:split_kernel|cudnn_generated' -s 3 -c 1 --csv --page raw \
    build/release/bench/bench_attention --profile --dtypes=bf16 --shapes=b64_hq32_hkv32_d128_q1_kv4096 \
    --benchmark_filter="^attention/$c/bf16/decode/.*/cold" > "$O/ncu_mha_$c.csv" 2> "$O/ncu_mha_$c.err"
  echo "ncu $c rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
cd "$OUT" && tar czf o77.tgz o77 && rm -rf o77
