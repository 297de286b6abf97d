#!/usr/bin/env bash
# Compile-time alternatives of a kernel, measured side by side in one command on a GPU machine.
#   scripts/gpu_experiments.sh OUTDIR DEFINE...
#   scripts/gpu_experiments.sh out SB_TILED_FLASH_EXPERIMENT=2 SB_TILED_FLASH_EXPERIMENT=3
# Builds the default tree (Release, with the PyTorch baselines when PyTorch is installed) and one
# build per DEFINE (-D<DEFINE> for the CUDA sources, no PyTorch), all in parallel; then, one build at a
# time, runs the GPU tests named by TEST_FILTER and the benchmarks named by BENCH_FILTER over SHAPES
# in DTYPES, cold, with REPETITIONS. Writes OUTDIR/<name>.json (name: default, or the DEFINE with '='
# as '_') and OUTDIR/<name>_test.log, and prints one line per case: build, case, median µs.
# A build whose tests fail is reported and not benchmarked. Exit status: 1 if any build or test failed.
set -uo pipefail
out=${1:?usage: scripts/gpu_experiments.sh OUTDIR DEFINE...}
shift
[ $# -gt 0 ] || { echo "gpu_experiments.sh: name at least one DEFINE (e.g. SB_DECODE_EXPERIMENT=3)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
test_filter=${TEST_FILTER:-*Attention*:*DecodeSplitk*:*TiledFlash*}
bench_filter=${BENCH_FILTER:-^attention/(tiled_flash|decode_splitk|torch_sdpa_flash|torch_sdpa_cudnn)/.*/cold}
status=0

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu_experiments.sh: no NVIDIA GPU here (nvidia-smi -L failed)" >&2
  exit 3
fi

name_of() { echo "${1//=/_}"; }
configure_build() {  # build_dir torch cuda_flags log
  cmake -S "$root" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH="$2" \
    "-DCMAKE_CUDA_FLAGS=$3" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 >"$4" 2>&1 &&
    cmake --build "$1" -j "$(nproc)" --target bench_attention test_gpu >>"$4" 2>&1
}

builds=(default)
configure_build "$root/build/exp_default" AUTO "" "$out/default_build.log" &
for d in "$@"; do
  n=$(name_of "$d")
  builds+=("$n")
  configure_build "$root/build/exp_$n" OFF "-D$d" "$out/${n}_build.log" &
done
wait

for n in "${builds[@]}"; do
  b=$root/build/exp_$n
  if [ ! -x "$b/bench/bench_attention" ]; then
    echo "$n: BUILD FAILED (see ${n}_build.log)"; status=1; continue
  fi
  if ! SOLBENCH_REQUIRE_GPU=1 "$b/tests/test_gpu" --gtest_filter="$test_filter" --gtest_brief=1 >"$out/${n}_test.log" 2>&1; then
    echo "$n: TESTS FAILED (see ${n}_test.log)"; status=1; continue
  fi
  echo "$n: $(grep -E 'PASSED' "$out/${n}_test.log")"
  "$b/bench/bench_attention" --shapes="${SHAPES:-anchors}" --dtypes="${DTYPES:-bf16}" --benchmark_filter="$bench_filter" \
    --benchmark_repetitions="${REPETITIONS:-3}" --benchmark_display_aggregates_only=true \
    --benchmark_out="$out/$n.json" --benchmark_out_format=json 2>&1 |
    awk -v n="$n" '/_median/ {sub("/manual_time_median", "", $1); print n, $1, $2}' || status=1
done
exit $status
