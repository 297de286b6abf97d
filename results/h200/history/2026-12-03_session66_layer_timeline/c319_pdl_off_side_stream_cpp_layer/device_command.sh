#!/usr/bin/env bash
# Session 66, c319: c318 (Python replica of the 70B decode layer) read ours FASTER in the layer (span 549.6 vs
# 558.1 us cold): the attention window ours 40.8 vs cuDNN 41.9 us, and the first FFN GEMM (Wg) 108.9 us after ours
# against 117.7 after cuDNN or no attention (Wu, the same GEMM, 109 in all). Questions: (1) does bench_e2e (C++)
# still read ours ~12 us slower on this machine; (2) is PDL (SB_DECODE_PDL) what moves Wg: a no-PDL probe lib;
# (3) does the stream (the suite's own vs PyTorch's default) change it.
set -u
O=$OUT/o319; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c319.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/nopdl -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_CUDA_FLAGS=-DSB_DECODE_PDL=0 -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure_nopdl.log" 2>&1 \
  && timeout 120 cmake --build build/nopdl -j 16 --target solbench_probe > "$O/build_nopdl.log" 2>&1; t "build nopdl rc=$?"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 200 cmake --build build/release -j 16 --target solbench_probe bench_e2e > "$O/build.log" 2>&1; t "build rc=$?"
L=build/release/bench/libsolbench_probe.so
timeout 60 python3 scripts/layer_timeline.py -o "$O/t_default.json" --modes cold --lib $L > "$O/t_default.log" 2>&1; t "default rc=$?"
timeout 60 python3 scripts/layer_timeline.py -o "$O/t_side.json" --modes cold --side-stream --lib $L > "$O/t_side.log" 2>&1; t "side rc=$?"
timeout 60 python3 scripts/layer_timeline.py -o "$O/t_nopdl.json" --modes cold --attn solbench,none --lib build/nopdl/bench/libsolbench_probe.so > "$O/t_nopdl.log" 2>&1; t "nopdl rc=$?"
timeout 150 build/release/bench/bench_e2e --dtypes=bf16 \
  --benchmark_filter='e2e/(solbench_attention|torch_eager|ref_rest_of_layer)/bf16/decode/h8192_hq64_hkv8_d128_f28672_b1_q1_kv32768/cold' \
  --benchmark_repetitions=5 --benchmark_display_aggregates_only=true \
  --benchmark_out="$O/e2e.json" --benchmark_out_format=json > "$O/e2e.log" 2>&1; t "bench_e2e rc=$?"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt"; grep -hE "^(==|cold) " "$O"/t_*.log; grep -hE "^ +(21|23|25) " "$O"/t_*.log | cut -c1-60
grep -E "_median" "$O/e2e.log" | awk '{print $1, $2, $3}'; tail -3 "$O/e2e.log"; grep -B2 -A8 "error" "$O"/build*.log | head -30
gzip -9 -n "$O"/build*.log 2>/dev/null
cd "$OUT" && tar czf o319.tgz o319 && rm -rf o319
