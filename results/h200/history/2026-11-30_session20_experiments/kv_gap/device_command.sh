#!/usr/bin/env bash
# Session 20, call 1: the K / V placement diagnostic (SOLBENCH_KV_GAP over none/0/2048/65536/2097152/2099200,
# two passes, the second reversed, cold, decode_splitk and cuDNN) at three large decode shapes; the KvGap GPU
# test; then Nsight Compute launch stats of cuDNN's kernel at b16 GQA KV 32768.
set -u
O=$OUT/o73; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c73.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git rev-parse HEAD > "$O/commit.txt"
{ cmake --preset release && cmake --build --preset release --target bench_attention test_gpu; } > "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
build/release/tests/test_gpu --gtest_filter='DecodeSplitk.KvGap*' > "$O/test_kvgap.log" 2>&1
echo "test rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
S=b64_hq32_hkv8_d128_q1_kv16384,b64_hq32_hkv32_d128_q1_kv4096,b16_hq32_hkv8_d128_q1_kv32768
i=0
for g in none 0 2048 65536 2097152 2099200 2099200 2097152 65536 2048 0 none; do
  i=$((i + 1))
  if [ $g = none ]; then unset SOLBENCH_KV_GAP; else export SOLBENCH_KV_GAP=$g; fi
  left=$(( 560 - ($(date +%s) - start) ))
  [ $left -lt 20 ] && { echo "stopped before pass $i" >> "$O/exp.txt"; break; }
  timeout $left build/release/bench/bench_attention --dtypes=bf16 --shapes=$S \
    --benchmark_filter='^attention/(decode_splitk|torch_sdpa_cudnn)/.*/cold' --benchmark_repetitions=3 \
    --benchmark_out="$O/kv_gap_$(printf %02d $i)_$g.json" --benchmark_out_format=json > "$O/kv_gap_$(printf %02d $i)_$g.log" 2>&1
  echo "gap $g ($i) rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
done
unset SOLBENCH_KV_GAP
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
left=$(( 585 - ($(date +%s) - start) ))
if [ $left -gt 25 ]; then
  timeout $left ncu --clock-control none --cache-control all --section LaunchStats --section SpeedOfLight --section Occupancy -k 'regex:cudnn' -c 3 --csv --page raw build/release/bench/bench_attention --profile --dtypes=bf16 --shapes=b16_hq32_hkv8_d128_q1_kv32768 --benchmark_filter='^attention/torch_sdpa_cudnn/bf16/decode/.*/cold' > "$O/ncu_cudnn_b16_kv32768.csv" 2>&1
  echo "ncu rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
fi
cd "$OUT" && tar czf o73.tgz o73 && rm -rf o73
