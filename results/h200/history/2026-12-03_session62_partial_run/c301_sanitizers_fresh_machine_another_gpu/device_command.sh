#!/usr/bin/env bash
# Session 62, c301: part 3 of the full bf16 run at 9cdd933 on a fresh machine: c299's machine (GPU-c1d70c4c) was given
# back before this call (an interruption on this side). Parts 1 and 2's JSONs are carried in results/h200/logs. If the
# fresh machine holds the same GPU: the Release build, then the prefill set and the cross-check (5 calls a case), the
# sanitizers after. On another GPU the merge would refuse the parts (one run = one GPU), so then: only the sanitizers.
set -u
O=$OUT/o301; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c301.sh "$O/device_command.sh"; cat .devcall/s/sha > "$O/sha.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
t "GPU $uuid"
mkdir -p results/h200 && tar xJf .devcall/s/logs299.tar.xz -C results/h200; ls -l results/h200/logs > "$O/before.txt" 2>&1
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 300 cmake --build build/release -j 16 > "$O/build.log" 2>&1; rc=$?; t "build rc=$rc"
san() {
  left=$(( 585 - ($(date +%s) - start) ))
  SHARDS=8 TIMEOUT=$left scripts/sanitize.sh build/release/tests/test_gpu "$O/san" memcheck,racecheck \
    '*RmsNorm*:*DecodeSplitkShapes*b16_hq32_hkv8_d128_q1_kv1000_splits0:*DecodeSplitkShapes*b32_hq16_hkv4_d64_q1_kv777_splits0:*DecodeSplitkShapes*b32_hq16_hkv16_d128_q1_kv100_splits0:DecodeSplitkLaunch.*' \
    >> "$O/exp.txt" 2>&1
  t "sanitizers rc=$?"
}
if [ $rc = 0 ] && [ "$uuid" = GPU-c1d70c4c-5d1c-62b9-dd87-13954d7037d5 ]; then
  left=$(( 590 - ($(date +%s) - start) ))
  CONTINUE_RUN=1 BENCHES=bench_attention_prefill REPETITIONS=3 BENCH_ARGS=--dtypes=bf16 \
    SKIP_TESTS=1 SKIP_SANITIZER=1 timeout $left scripts/run_suite.sh > "$O/suite3.log" 2>&1
  t "run_suite part 3 rc=$?"
  mkdir -p "$O/run" && cp results/h200/*.json results/h200/env_*.txt "$O/run/" 2>/dev/null; cp -r results/h200/logs "$O/run/logs"
  [ $(( $(date +%s) - start )) -lt 520 ] && san
elif [ $rc = 0 ]; then
  t "another GPU: sanitizers only"
  san
fi
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_end.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; grep "^== " "$O/suite3.log" 2>/dev/null; tail -4 "$O/suite3.log" 2>/dev/null
grep -E "calls of case bodies" results/h200/logs/bench.log
gzip -9 -n "$O/build.log" 2>/dev/null
for f in "$O"/san_*.log; do [ -f "$f" ] && gzip -9 -n "$f"; done
cd "$OUT" && tar czf o301.tgz o301 && rm -rf o301
