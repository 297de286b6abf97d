#!/usr/bin/env bash
# Session 30, c137: experiments/decode_stream_k.patch (SB_DECODE_EXPERIMENT=63: a one-wave tensor-core decode
# plan runs as SMs blocks over the units' tiles in one sequence; =64: 2 x SMs blocks) beside the default
# build, two passes, cold; decode tests of each build; memcheck and racecheck of =63 over the DecodeSplitk tests.
set -u
O=$OUT/o137; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c137.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_stream_k.patch TEST_FILTER='*DecodeSplitk*:*decode_splitk*' PASSES=2 \
SHAPES=b16_hq32_hkv8_d128_q1_kv32768,b16_hq32_hkv8_d128_q1_kv8192,b1_hq32_hkv8_d128_q1_kv16384,b1_hq32_hkv8_d128_q1_kv32768,b1_hq32_hkv8_d128_q1_kv131072,b4_hq32_hkv8_d128_q1_kv131072,b64_hq32_hkv8_d128_q1_kv4096 \
DTYPES=bf16 BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/cold' \
SANITIZE=memcheck,racecheck SANITIZE_BUILDS=SB_DECODE_EXPERIMENT_63 SANITIZE_FILTER='*DecodeSplitk*' SANITIZE_TIMEOUT=170 \
timeout 560 scripts/gpu_experiments.sh "$O/x" SB_DECODE_EXPERIMENT=63 SB_DECODE_EXPERIMENT=64 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$O/gpu_start.txt" 2>&1
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/x/summary.txt" 2>/dev/null | head -60
grep -hE "PASSED|FAILED" "$O"/x/*_test.log | tail -8
tail -12 "$O/exp.log"
rm -f "$O"/x/*.json.tmp
cd "$OUT" && tar czf o137.tgz o137 && rm -rf o137
