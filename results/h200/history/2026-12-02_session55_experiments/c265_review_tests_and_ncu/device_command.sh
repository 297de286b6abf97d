#!/usr/bin/env bash
# Session 55, c265: (1) the review-pass commits (7024785 word_sum.cuh shared by read_sum_kernel and ref_kv_stream, c8ca998
# ref_kv_stream's one-plan launch) on the H200: AttentionKvStream, AttentionKvRead and HarnessGpu.ReadSumKernelReadsEveryWordOnce,
# then memcheck and racecheck over them. (2) Nsight Compute (no clock control; caches flushed and invalidated before each
# kernel, so a clean L2) of decode_splitk, ref_kv_read, ref_kv_stream and SDPA cuDNN at the two decode shapes behind SDPA in
# every run (GQA b16 KV 32768, MHA b256 KV 1024) and one ahead (GQA b256 KV 4096), bf16: each kernel's duration, DRAM bytes,
# instructions, L2 requests and sectors from L1, and its launch shape, in bench_attention's --profile mode.
set -u
O=$OUT/o265; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c265.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
B=build/release
cmake --preset release > "$O/build.log" 2>&1 && cmake --build $B -j 16 --target bench_attention test_gpu test_harness_gpu >> "$O/build.log" 2>&1; t "build rc=$?"
$B/tests/test_gpu --gtest_filter='AttentionKvStream.*:AttentionKvRead.*' > "$O/test.log" 2>&1; t "test_gpu rc=$?"
$B/tests/test_harness_gpu --gtest_filter='*ReadSumKernelReadsEveryWordOnce*' > "$O/test_harness.log" 2>&1; t "test_harness_gpu rc=$?"
SHARDS=2 TIMEOUT=200 scripts/sanitize.sh $B/tests/test_gpu "$O/san" memcheck,racecheck 'AttentionKvStream.*:AttentionKvRead.*' > "$O/sanitize.log" 2>&1; t "sanitize test_gpu rc=$?"
SHARDS=1 TIMEOUT=120 scripts/sanitize.sh $B/tests/test_harness_gpu "$O/sanh" memcheck,racecheck '*ReadSumKernelReadsEveryWordOnce*' > "$O/sanitize_harness.log" 2>&1; t "sanitize test_harness_gpu rc=$?"
ncu --query-metrics > "$O/metrics_available.txt" 2>&1
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread
for m in launch__shared_mem_per_block_dynamic smsp__inst_executed.sum lts__t_requests_srcunit_tex.sum lts__t_sectors_srcunit_tex.sum \
         sm__warps_active.avg.pct_of_peak_sustained_active lts__t_sectors_srcunit_tex_lookup_hit.sum dram__cycles_elapsed.avg.per_second \
         sm__cycles_elapsed.avg.per_second lts__t_sectors.sum lts__t_requests.sum; do
  base=${m%%.*}; grep -q "^$base " "$O/metrics_available.txt" && M="$M,$m" || echo "metric $base not listed" >> "$O/exp.txt"
done
echo "metrics: $M" >> "$O/exp.txt"
timeout 200 ncu --clock-control none --cache-control all --csv --page raw --metrics "$M" \
  $B/bench/bench_attention --profile --dtypes=bf16 --shapes=b16_hq32_hkv8_d128_q1_kv32768,b256_hq32_hkv32_d128_q1_kv1024,b256_hq32_hkv8_d128_q1_kv4096 \
  --benchmark_filter='(decode_splitk|ref_kv_read|ref_kv_stream|torch_sdpa_cudnn)/bf16/.*/cold' > "$O/ncu.csv" 2> "$O/ncu.err"; t "ncu rc=$?"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
gzip -9 -n "$O/build.log" "$O/metrics_available.txt"; for f in "$O"/san*; do [ -f "$f" ] && gzip -9 -n "$f"; done
cat "$O/exp.txt" "$O/gpu_start.txt"; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|SKIPPED \]" "$O/test.log" "$O/test_harness.log"; tail -6 "$O/sanitize.log" "$O/sanitize_harness.log"
tail -3 "$O/ncu.err"; wc -l "$O/ncu.csv"
python3 - "$O/ncu.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: sys.exit("no ncu rows")
h = rows[0]; data = [dict(zip(h, r)) for r in rows[2:]]
for d in data:
    if float(d.get("gpu__time_duration.sum", 0) or 0) < 20000: continue
    keys = [k for k in h if "__" in k and k != "gpu__time_duration.sum"]
    print(d.get("Kernel Name", "?")[:110], "dur", d["gpu__time_duration.sum"], " ".join(f"{k.split('.')[0]}={d[k]}" for k in keys))
PY
cd "$OUT" && tar czf o265.tgz o265 && rm -rf o265
