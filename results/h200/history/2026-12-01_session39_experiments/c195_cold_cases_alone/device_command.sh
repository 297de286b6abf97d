#!/usr/bin/env bash
# Session 39, c195: does the case order set wgmma_flash's clock in the cold runs? In 503b488's run, at b4 h32 s4096 D 128
# causal, wgmma_flash cold held 1,433 MHz (1,161 us) right after tiled_flash's hot case, and cuDNN cold 1,815 (979 us);
# hot, and in c194's back-to-back probe, ours is the faster (1,030 against 1,062 us). Five bench_attention processes,
# bf16, 3 repetitions: the two cold cases together (ours first, as registered), each alone, and each after the hot case
# that precedes it in the full run (tiled_flash's before ours, SDPA efficient's before cuDNN).
set -u
O=$OUT/o195; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c195.sh "$O/device_command.sh"
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
  > "$O/configure.log" 2>&1 && timeout 240 cmake --build build/release -j 16 --target bench_attention > "$O/build.log" 2>&1
echo "build rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
S=b4_hq32_hkv32_d128_q4096_kv4096_causal
P=bf16/prefill/$S
i=0
for f in "(wgmma_flash|torch_sdpa_cudnn)/$P/cold" "torch_sdpa_cudnn/$P/cold" "wgmma_flash/$P/cold" \
         "(tiled_flash/$P/hot|wgmma_flash/$P/cold)" "(torch_sdpa_efficient/$P/hot|torch_sdpa_cudnn/$P/cold)"; do
  i=$((i + 1))
  timeout 100 build/release/bench/bench_attention --shapes=$S --dtypes=bf16 --benchmark_repetitions=3 \
    --benchmark_filter="^attention/$f" --benchmark_out="$O/r$i.json" --benchmark_out_format=json > "$O/r$i.log" 2>&1
  echo "r$i rc=$? at $(( $(date +%s) - start )) s: $f" >> "$O/exp.txt"
done
cat "$O/exp.txt"
python3 - "$O" <<'PY'
import json, sys, glob
for p in sorted(glob.glob(sys.argv[1] + "/r*.json")):
    d = json.load(open(p))
    for b in d["benchmarks"]:
        if b.get("aggregate_name") == "median":
            print(p.split("/")[-1], b["run_name"].split("/")[1], b["run_name"].split("/")[-2],
                  round(b["real_time"], 1), "us hold", round(b.get("hold_mhz", 0)), "sm", round(b["sm_mhz"]))
PY
cd "$OUT" && tar czf o195.tgz o195 && rm -rf o195
