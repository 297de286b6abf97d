#!/usr/bin/env bash
# Session 66, c320: c319 found that with SB_DECODE_PDL=1 the two FFN up-projections (nvjet 2x1-cluster GEMMs,
# grid 132 CTAs) run ~11 us slower each after our attention (121 vs 109 us), and at 109 with SB_DECODE_PDL=0;
# c318's H200 showed the opposite sign on Wg. Which predecessor moves them: --neighbours times Wg, Wu after
# SDPA, ours, ours+norm, ours+Wo+norm, our RMSNorm (PDL) and torch's, with the PDL build and a build with both PDL
# switches off, then the PDL build again (is the state stable on one machine).
set -u
O=$OUT/o320; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c320.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/nopdl -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF "-DCMAKE_CUDA_FLAGS=-DSB_DECODE_PDL=0 -DSB_RMSNORM_PDL=0" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure_nopdl.log" 2>&1 \
  && timeout 120 cmake --build build/nopdl -j 16 --target solbench_probe > "$O/build_nopdl.log" 2>&1; t "build nopdl rc=$?"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 120 cmake --build build/release -j 16 --target solbench_probe > "$O/build.log" 2>&1; t "build rc=$?"
for run in pdl nopdl pdl2; do
  L=build/release/bench/libsolbench_probe.so; [ $run = nopdl ] && L=build/nopdl/bench/libsolbench_probe.so
  timeout 90 python3 scripts/layer_timeline.py -o "$O/t_$run.json" --modes cold --neighbours --lib $L > "$O/t_$run.log" 2>&1; t "$run rc=$?"
done
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt"; for run in pdl nopdl pdl2; do echo "== $run"; grep -hE "^(== cold layer|cold )" "$O/t_$run.log" | cut -c1-150; grep -h "^neighbours" "$O/t_$run.log" | cut -c1-200; done
tail -3 "$O/t_pdl.log"; grep -B2 -A8 "error" "$O"/build*.log | head -30
gzip -9 -n "$O"/build*.log 2>/dev/null
cd "$OUT" && tar czf o320.tgz o320 && rm -rf o320
