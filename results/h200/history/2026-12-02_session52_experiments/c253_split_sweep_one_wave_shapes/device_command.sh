#!/usr/bin/env bash
# Session 52, c253: is GQA b16 KV 32768 (1 split: 128 blocks, one wave, 16 MiB of K and V a block) behind cuDNN because
# a one-wave grid of long blocks waits on its slowest block? If so, more, shorter units (splits 2-8: 2-4 waves at the
# tensor-core kernel's two blocks an SM) should close part of the ~0.5% to ref_kv_read despite the combine. The split
# sweep (cold) at it and at MHA b16 KV 8192 (256 FMA blocks, one wave), with decode_splitk's own plan, SDPA cuDNN
# and ref_kv_read cold and hot, two passes (two processes), 5 repetitions each, the repetitions interleaved.
set -u
O=$OUT/o253; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c253.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cat .devcall/s/sha > "$O/sha.txt"
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 240 cmake --build build/release -j 16 --target bench_attention > "$O/build.log" 2>&1; rc=$?; t "build rc=$rc"
[ $rc = 0 ] || { tail -30 "$O/build.log"; exit 1; }
for pass in 1 2; do
  left=$(( 560 - ($(date +%s) - start) ))
  [ $left -gt 60 ] || break
  timeout $left build/release/bench/bench_attention --shapes=b16_hq32_hkv8_d128_q1_kv32768,b16_hq32_hkv32_d128_q1_kv8192 \
    --dtypes=bf16 --split-sweep=all --benchmark_filter='decode_splitk|torch_sdpa_cudnn|ref_kv_read' \
    --benchmark_repetitions=5 --benchmark_out="$O/pass$pass.json" --benchmark_out_format=json > "$O/pass$pass.log" 2>&1
  t "pass $pass rc=$?"
done
cat "$O/exp.txt" "$O/gpu_start.txt"
for pass in 1 2; do [ -s "$O/pass$pass.json" ] && python3 - "$O/pass$pass.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["benchmarks"]:
    if b.get("aggregate_name") == "median":
        print("%9.2f  %s  splits=%s" % (b["real_time"], b["run_name"].replace("/manual_time", ""), b.get("splits", "")))
PY
done
for f in "$O"/*.log "$O"/*.json; do [ $(stat -c %s "$f") -gt 8192 ] && xz -9 "$f"; done
cd "$OUT" && tar czf o253.tgz o253 && rm -rf o253
