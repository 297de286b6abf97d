#!/usr/bin/env bash
set -u
O=/tmp/o14; mkdir -p "$O"
start=$(date +%s)
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
S=/tmp/src14; rm -rf $S; mkdir -p $S; tar -C . --exclude=./build --exclude=./.git -cf - . | tar -C $S -xf -
for p in experiments/decode_splitk_tensor_core_exact.patch experiments/decode_splitk_tc_one_block_slots.patch; do patch -d $S -p1 --quiet < $p; done
cmake -S $S -B /tmp/b14 -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_CUDA_FLAGS=-DSB_DECODE_EXPERIMENT=14 -DCMAKE_CXX_FLAGS=-DSB_DECODE_EXPERIMENT=14 -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/build.log" 2>&1 &&
  timeout 170 cmake --build /tmp/b14 -j 16 --target bench_attention >> "$O/build.log" 2>&1
log "build rc=$?"
timeout 60 ncu --clock-control none --cache-control all -k 'regex:split_kernel|combine' --set full --csv --page raw \
  /tmp/b14/bench/bench_attention --profile --shapes=b16_hq32_hkv8_d128_q1_kv8192 --benchmark_filter='decode_splitk/bf16/.*/cold' > "$O/ncu_14_b16.csv" 2>&1
log "ncu rc=$?"
tar czf "$OUT/o14.tgz" -C /tmp o14
