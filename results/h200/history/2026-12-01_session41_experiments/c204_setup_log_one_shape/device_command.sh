#!/usr/bin/env bash
# Session 41, c204: where an interleaved repetition's time goes (c203: bench_attention's decode set under protocol v58 ran past
# 575 s, against ~245 s registered). bench_attention with a setup log (.devcall/s/setup_log.patch: the wall time of a case's
# data rebuild, warm-up, graph capture, settle and whole run_timed call, stderr), one decode shape, bf16, 2 repetitions,
# interleaved (the default) then registered.
set -u
O=$OUT/o204; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c204.sh .devcall/s/setup_log.patch "$O/"
git apply .devcall/s/setup_log.patch; t "patch rc=$?"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 200 cmake --build build/release -j 16 --target bench_attention > "$O/build.log" 2>&1; t "build rc=$?"
F='b1_hq32_hkv8_d128_q1_kv4096'
for order in true false; do
  s0=$(date +%s%N)
  timeout 200 build/release/bench/bench_attention --shapes=decode --dtypes=bf16 --benchmark_filter="$F" --benchmark_repetitions=2 \
    --benchmark_enable_random_interleaving=$order --benchmark_out="$O/i_$order.json" --benchmark_out_format=json > "$O/i_$order.log" 2>&1
  rc=$?; t "interleaving=$order rc=$rc wall $(( ($(date +%s%N) - s0) / 1000000 )) ms"
done
git apply -R .devcall/s/setup_log.patch
cat "$O/exp.txt"
for order in true false; do
  echo "== $order"; grep -c XSETUP "$O/i_$order.log"; grep XDATA "$O/i_$order.log" | awk '{n++; s+=$3} END {print "XDATA n", n, "sum ms", s}'
  grep XSETUP "$O/i_$order.log" | awk '{w+=($4>0?$4:0); c+=($6>0?$6:0); st+=($8>0?$8:0); tot+=$10} END {print "warm", w, "cap", c, "settle", st, "total", tot}'
done
grep XSETUP "$O/i_true.log" | sort -k10 -g -r | head -5 | cut -c1-200
cd "$OUT" && tar czf o204.tgz o204 && rm -rf o204
