#!/usr/bin/env bash
# Session 32, c157: 3c87d47e941bb9e9478899b2b0f6e4230e718eec with the stream fix taken out of the device's copy (the layer built on the legacy
# default stream, unsynchronized, as before 7a5a801): does LayerTorch.ALayerBuiltAfterALargerOneIsReadyForItsFirstPass
# fail, as c149's sequence did? Three runs of it.
set -u
O=$OUT/o157; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c157.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
python3 - <<'PY'
p = "ref/torch/torch_layer.cpp"
s = open(p).read()
a = '''  const char* refused = guarded(stream, [&]() -> const char* {
    init(seed);
    return kOk;
  });
  if (*refused) throw std::runtime_error(std::string("Layer: PyTorch refused to build it: ") + refused);
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));'''
assert a in s
s = s.replace(a, '''  (void)stream;
  c10::InferenceMode inference;
  init(seed);''')
open(p, "w").write(s)
PY
git diff --stat > "$O/patch.txt" 2>&1; diff <(git show HEAD:ref/torch/torch_layer.cpp) ref/torch/torch_layer.cpp >> "$O/patch.txt"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && SOLBENCH_GIT_COMMIT=3c87d47e941bb9e9478899b2b0f6e4230e718eec timeout 200 cmake --build build/release -j 16 --target test_gpu_torch > "$O/build.log" 2>&1; t "build rc=$?"
grep -E "error" "$O/build.log" | head -20 >> "$O/exp.txt"
for i in 1 2 3; do
  SOLBENCH_REQUIRE_GPU=1 timeout 60 build/release/tests/test_gpu_torch --gtest_filter='LayerTorch.ALayerBuilt*' > "$O/tests_$i.log" 2>&1; t "run $i rc=$? $(grep -E 'NaN in|PASSED|FAILED  \]' "$O/tests_$i.log" | head -2 | tr '\n' ' ')"
done
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/patch.txt"
cd "$OUT" && tar czf o157.tgz o157 && rm -rf o157
