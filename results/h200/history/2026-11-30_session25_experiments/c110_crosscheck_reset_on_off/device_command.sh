#!/usr/bin/env bash
# Session 25, call 5: does protocol v26 itself move at::rms_norm's small cold figures away from do_bench's?
# The same shapes as call 4's cross-check, with the persisting-line reset on (v26) and off (v10), one
# process each, each cross-checked against do_bench (2 runs) right after, on one GPU.
set -u
O=$OUT/o110; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c110.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 200 cmake --build build/release -j 16 > "$O/build.log" 2>&1; t "build rc=$?"
for pass in 1 2; do for r in on off; do
  SOLBENCH_PERSISTING_RESET=$r timeout 60 build/release/bench/bench_rmsnorm --shapes=1x4096,1x8192,256x4096,8192x768,64x8192 --dtypes=bf16 \
    --benchmark_filter='torch_rms_norm.*cold' --benchmark_repetitions=3 --benchmark_display_aggregates_only=true \
    --benchmark_out="$O/rms_${r}_$pass.json" --benchmark_out_format=json > "$O/rms_${r}_$pass.log" 2>&1; t "bench $r pass $pass rc=$?"
  PYTHONUNBUFFERED=1 timeout 90 python3 scripts/crosscheck_torch.py "$O/rms_${r}_$pass.json" -o "$O/crosscheck_${r}_$pass.json" --runs 2 > "$O/crosscheck_${r}_$pass.log" 2>&1
  t "crosscheck $r pass $pass rc=$?"
done; done
cat "$O/exp.txt" "$O/gpu_start.txt"; for f in "$O"/crosscheck_*.log; do echo "== $f"; grep -E "harness|passed" "$f" | cut -c1-150; done
cd "$OUT" && tar czf o110.tgz o110 && rm -rf o110
