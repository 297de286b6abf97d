#!/usr/bin/env bash
# Session 39, c194: scripts/energy_probe.py (NVML's energy counter over back-to-back calls) on wgmma_flash against
# cuDNN's SDPA at four prefill shapes, bf16, four rounds of 1.5 s each. Prediction (written before): at D 128 both at
# the power limit (mean W within 3%), ours 1.10-1.20x cuDNN's joules a call at b4 h32 s4096 causal and b8 h16 s2048,
# its clock 10-20% lower; at D 64 b8 s2048 causal (held near 1,950 MHz in the runs) the joules' ratio near the time's.
set -u
O=$OUT/o194; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c194.sh "$O/device_command.sh"
nvidia-smi -q -d POWER,CLOCK,PERFORMANCE > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/probe -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
  > "$O/configure.log" 2>&1 && timeout 240 cmake --build build/probe -j 16 --target solbench_probe > "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
timeout 200 python3 scripts/energy_probe.py --lib build/probe/bench/libsolbench_probe.so -o "$O/energy.json" \
  --shapes b4_hq32_hkv32_d128_q4096_kv4096_causal,b8_hq16_hkv16_d128_q2048_kv2048,b1_hq16_hkv16_d128_q16384_kv16384_causal,b8_hq32_hkv32_d64_q2048_kv2048_causal \
  --rounds 4 --seconds 1.5 > "$O/energy.log" 2>&1
echo "probe rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi -q -d POWER,PERFORMANCE > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt"; grep -iE "power limit|Power Draw" "$O/gpu_start.txt" | head -4; tail -5 "$O/build.log"
grep -v '^{"shape"' "$O/energy.log" | tail -70
cd "$OUT" && tar czf o194.tgz o194 && rm -rf o194
