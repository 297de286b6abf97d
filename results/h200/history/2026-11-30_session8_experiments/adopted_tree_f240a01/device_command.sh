#!/usr/bin/env bash
set -u
O=/tmp/o15; mkdir -p "$O"
start=$(date +%s)
log() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
git_commit=$(cat .devcall/s/commit.txt 2>/dev/null); echo "tree of $git_commit" > "$O/exp.txt"
cmake -S . -B /tmp/b15 -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/build.log" 2>&1 &&
  timeout 110 cmake --build /tmp/b15 -j 16 --target test_gpu >> "$O/build.log" 2>&1
log "build rc=$?"
SOLBENCH_REQUIRE_GPU=1 timeout 40 /tmp/b15/tests/test_gpu --gtest_filter='*DecodeSplitk*:*Attention*' --gtest_brief=1 > "$O/test_gpu_attention.log" 2>&1
log "tests rc=$?"
el=$(( $(date +%s) - start ))
SOLBENCH_REQUIRE_GPU=1 timeout $(( 175 - el )) compute-sanitizer --tool memcheck --error-exitcode 1 /tmp/b15/tests/test_gpu --gtest_filter='*DecodeSplitk*' --gtest_brief=1 > "$O/memcheck_decode.log" 2>&1
log "memcheck rc=$?"
tar czf "$OUT/o15.tgz" -C /tmp o15
