#!/usr/bin/env bash
# Session 17, call 2: decode_splitk_mha_tc.patch (=47/=48 MHA on the tensor-core kernel, =49 FMA heuristic
# counting 3 blocks an SM) beside the default, seven MHA decode shapes; memcheck of =47, racecheck of MHA tests.
set -u
O=$OUT/o61; mkdir -p "$O"
start=$(date +%s)
cp .devcall/s/c61.sh "$O/device_command.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=experiments/decode_splitk_mha_tc.patch TEST_FILTER='*DecodeSplitk*' SHAPES=b1_hq32_hkv32_d128_q1_kv4096,b1_hq32_hkv32_d128_q1_kv32768,b1_hq32_hkv32_d128_q1_kv131072,b16_hq32_hkv32_d128_q1_kv8192,b64_hq32_hkv32_d128_q1_kv4096,b64_hq32_hkv32_d128_q1_kv16384,b256_hq32_hkv32_d128_q1_kv1024 BENCH_FILTER='^attention/(decode_splitk|torch_sdpa_cudnn)/.*_q1_.*/(cold|hot)' SANITIZE=memcheck,racecheck SANITIZE_BUILDS='SB_DECODE_EXPERIMENT_47' SANITIZE_TIMEOUT=150 RACECHECK_FILTER='*DecodeSplitk*hq16_hkv16*:*DecodeSplitk*hq8_hkv8*:*DecodeSplitk*hq5_hkv5*' timeout 570 scripts/gpu_experiments.sh "$O/exp" SB_DECODE_EXPERIMENT=47 SB_DECODE_EXPERIMENT=48 SB_DECODE_EXPERIMENT=49 > "$O/exp.log" 2>&1
echo "experiments rc=$? at $(( $(date +%s) - start )) s" >> "$O/exp.txt"
cd "$OUT" && tar czf o61.tgz o61 && rm -rf o61
