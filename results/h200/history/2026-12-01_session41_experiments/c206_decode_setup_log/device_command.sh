#!/usr/bin/env bash
# Session 41, c206: bench_attention's decode set, bf16, 3 repetitions, interleaved (protocol v58), as c203 ran it (which ran past
# 575 s), with the setup log of .devcall/s/setup_log2.patch (per run_timed call: seconds since the first, the case, the wall ms
# of warm-up, graph capture, settle and the whole call), stopped at 400 s: the share of repetitions done, by mode, gives the
# set's whole time under v58 and where it goes.
set -u
O=$OUT/o206; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c206.sh .devcall/s/setup_log2.patch "$O/"
mv "$O/c206.sh" "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
git apply .devcall/s/setup_log2.patch; t "patch rc=$?"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 200 cmake --build build/release -j 16 --target bench_attention > "$O/build.log" 2>&1; t "build rc=$?"
build/release/bench/bench_attention --shapes=decode --dtypes=bf16 --benchmark_list_tests=true > "$O/list.txt" 2>&1
t "cases $(grep -c '^attention\|^floor' "$O/list.txt")"
timeout 400 build/release/bench/bench_attention --shapes=decode --dtypes=bf16 --benchmark_repetitions=3 \
  --benchmark_out="$O/decode.json" --benchmark_out_format=json > "$O/decode.log" 2>&1
t "decode interleaved rc=$?"
git apply -R .devcall/s/setup_log2.patch
cat "$O/exp.txt"; grep -c XSETUP "$O/decode.log"; grep XSETUP "$O/decode.log" | awk '$5 >= 0 {n++} END {print "rep-runs started", n}'
grep XSETUP "$O/decode.log" | tail -1 | cut -c1-150
gzip "$O/decode.log" "$O/decode.json"
cd "$OUT" && tar czf o206.tgz o206 && rm -rf o206
