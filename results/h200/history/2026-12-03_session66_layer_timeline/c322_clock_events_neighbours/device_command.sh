#!/usr/bin/env bash
# Session 66, c322: is the FFN GEMMs' swing (c318-c320) the GPU's power management? The same as c320 (the 70B layer
# and --neighbours, the PDL build, then both PDL switches off, then PDL again), now with NVML's clock-event reasons
# sampled every ms beside the SM clock (the share of samples each reason was set in) and the lowest clock seen.
set -u
O=$OUT/o322; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c322.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/nopdl -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF "-DCMAKE_CUDA_FLAGS=-DSB_DECODE_PDL=0 -DSB_RMSNORM_PDL=0" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure_nopdl.log" 2>&1 \
  && timeout 120 cmake --build build/nopdl -j 16 --target solbench_probe > "$O/build_nopdl.log" 2>&1; t "build nopdl rc=$?"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 120 cmake --build build/release -j 16 --target solbench_probe > "$O/build.log" 2>&1; t "build rc=$?"
for run in pdl nopdl pdl2; do
  L=build/release/bench/libsolbench_probe.so; [ $run = nopdl ] && L=build/nopdl/bench/libsolbench_probe.so
  timeout 90 python3 scripts/layer_timeline.py -o "$O/t_$run.json" --modes cold,hot --neighbours --lib $L > "$O/t_$run.log" 2>&1; t "$run rc=$?"
done
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt"; for run in pdl nopdl pdl2; do echo "== $run"; grep -hE "^(== (cold|hot) layer|cold |hot )" "$O/t_$run.log" | cut -c1-260; grep -h "^neighbours" "$O/t_$run.log" | cut -c1-200; done
tail -3 "$O/t_pdl.log"; grep -B2 -A8 "error" "$O"/build*.log | head -30
gzip -9 -n "$O"/build*.log 2>/dev/null
cd "$OUT" && tar czf o322.tgz o322 && rm -rf o322
