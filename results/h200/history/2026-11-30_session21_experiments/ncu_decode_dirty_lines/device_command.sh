#!/usr/bin/env bash
# Session 21, call 4: DRAM bytes of b1 GQA decode after the harness's flush. Nsight Compute, application
# replay, no cache control (each pass follows the bench binary's own cold flush), a short metric list, over
# the committed kernels: decode_splitk's split kernel and SDPA cuDNN's kernels at b1 KV 4096 and 16384,
# under the default memset flush and the read flush.
set -u
O=$OUT/o84; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c84.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
B=build/diag
{ cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 &&
  cmake --build $B -j 16 --target bench_attention; } > "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
for m in memset read; do
  SOLBENCH_FLUSH_METHOD=$m timeout 150 ncu --clock-control none --cache-control none --replay-mode application \
    -k 'regex:split_kernel|sdpa|reduction' \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size \
    --csv --page raw $B/bench/bench_attention --profile --dtypes=bf16 \
    --shapes=b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv16384 \
    --benchmark_filter='^attention/(decode_splitk|torch_sdpa_cudnn)/bf16/.*/cold' > "$O/ncu_$m.csv" 2>&1
  echo "ncu $m rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
cd "$OUT" && tar czf o84.tgz o84 && rm -rf o84
