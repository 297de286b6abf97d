#!/usr/bin/env bash
# Session 66, c318: where do the 12 us go? scripts/layer_timeline.py on the Llama-3-70B decode layer (b1, KV 32768),
# where ours alone is 1.027x cuDNN (c317) but the layer with ours loses ~12 us; and the 8B layer at the same KV
# (ours 1.014x in the layer) for contrast. Prediction: the attention window differs by ~12 us at 70B; whether the
# split kernel itself is longer in the layer than alone (clock / L2) or the gaps/neighbours moved is the question.
set -u
O=$OUT/o318; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c318.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 150 cmake --build build/release -j 16 --target solbench_probe > "$O/build.log" 2>&1; t "build rc=$?"
timeout 200 python3 scripts/layer_timeline.py -o "$O/t70b.json" --lib build/release/bench/libsolbench_probe.so > "$O/t70b.log" 2>&1; t "70b rc=$?"
timeout 150 python3 scripts/layer_timeline.py -o "$O/t8b.json" --shape h4096_hq32_hkv8_d128_f14336_b1_q1_kv32768 --modes cold \
  --lib build/release/bench/libsolbench_probe.so > "$O/t8b.log" 2>&1; t "8b rc=$?"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt"; grep -E "^(==|cold|hot) " "$O/t70b.log" "$O/t8b.log"; tail -5 "$O/t70b.log"; grep -B2 -A8 "error" "$O/build.log" | head -30
cd "$OUT" && tar czf o318.tgz o318 && rm -rf o318
