#!/usr/bin/env bash
# Compile-time alternatives of a kernel, measured side by side in one command on a GPU machine.
#   scripts/gpu_experiments.sh OUTDIR DEFINE...
#   scripts/gpu_experiments.sh out SB_TILED_FLASH_EXPERIMENT=2 SB_TILED_FLASH_EXPERIMENT=3
#   BENCH=bench_rmsnorm PATCH=experiments/<candidate>.patch scripts/gpu_experiments.sh out <SWITCH>=1 <SWITCH>=2
#   BENCH=bench_rmsnorm PATCH=experiments/<candidate>.patch SAME_BINARY=vectorized_candidate:vectorized \
#     scripts/gpu_experiments.sh out
# PATCH (optional, space-separated): candidates not yet measured live as patches in experiments/, outside kernels/, so
# the committed results always describe the committed kernels. The DEFINE builds compile a copy of
# the tree with the patch applied (patch -p1); the default build compiles the tree as it is (under
# SAME_BINARY, the patched copy).
# Builds the default tree (Release) and one build per DEFINE (-D<DEFINE> for the CUDA and the C++ sources:
# a plan in a .cpp must see the switch too; no PyTorch), all in parallel. The default build links
# libtorch (when installed) only where BENCH_FILTER names a PyTorch baseline ("torch"); otherwise it is
# built without, as the DEFINE builds are, so that the binaries differ in the switch alone (session 48:
# an unchanged RMSNorm kernel read 0.97-1.08x hot between a libtorch default build and a switch build).
# DEFAULT_TORCH (AUTO, ON or OFF) overrides that choice.
# SAME_BINARY=CANDIDATE:BASELINE (variant names; no DEFINE then): one build, of the tree with PATCH applied,
# whose registry holds both variants (a patch adds the candidate as a variant of its own); each pass times both
# in one process, the cases interleaved by the harness, and the summary compares CANDIDATE's cases with
# BASELINE's of the same process (in timings.txt they read as build CANDIDATE, named as BASELINE's cases).
# Session 48 measured why: between two builds and passes, an unchanged hot microsecond kernel moved 0.90-1.08x.
# Several candidates, comma-separated (SAME_BINARY=CANDIDATE,CONTROL:BASELINE), each read as a build of its
# own: a patch can add a control, BASELINE's source compiled again unchanged under another name, whose ratio
# is the A/A noise the candidate's must exceed (session 49, c239: two variants running the same code read
# 1.013-1.233 a pass, hot 1 x 4096, in one process). BENCH_FILTER then defaults to every named variant's cases,
# cold and hot. CONTROL=NAME (a build of the command: a SAME_BINARY candidate, or a DEFINE build's name as in the
# output files) makes the summary read every other build's per-pass ratios against the control's
# (experiment_summary.py --control: faster than, slower than or within the control).
# Then runs each build's GPU tests named by TEST_FILTER, then PASSES (default 2) passes of the cases of BENCH
# (bench_attention or bench_rmsnorm) named by BENCH_FILTER over SHAPES in DTYPES, with REPETITIONS, every
# build once a pass, the order of the builds reversed every other pass; BENCH_ARGS adds flags to every bench run
# (e.g. BENCH_ARGS=--split-sweep=all: bench_attention's num_splits sweep at every shape of SHAPES). A TEST_FILTER that names no test of
# test_gpu fails the build (it is not benchmarked), and a sanitizer filter that names none fails that tool's
# run: a filter with a typo would otherwise pass 0 tests.
# Writes OUTDIR/<name>.json (pass 1; <name>_pass<k>.json after; name: default, or the DEFINE with
# '=' as '_'), OUTDIR/<name>_test.log, timings.txt (one line per pass, build and case: pass, build, case,
# median µs), gpu_state.txt (the GPU's UUID, SM and memory clocks, temperature and power as each timing starts) and
# summary.txt (scripts/experiment_summary.py: each build against the default of the same pass, averaged
# over the passes; rewritten after every pass, so a command cut by its limit leaves one). A build whose
# tests fail is reported and not benchmarked.
# NCU_SHAPES (optional): after the passes, Nsight Compute over every tested build's BENCH in --profile mode
# at those shapes (one Nsight Compute run per build, OUTDIR/ncu_<name>.csv.gz): the kernels NCU_KERNELS
# (default: decode_splitk's split and combine kernels, or `vectorized`'s), the cases NCU_FILTER (default:
# decode_splitk, or vectorized, bf16 cold), the section set NCU_SET (default full), the cache control
# NCU_CACHE (default all: clean caches; none: no cache control), the replay mode NCU_REPLAY (default kernel;
# application: every pass reruns the process), and NCU_METRICS (a comma-separated metric list instead of
# NCU_SET). NCU_CACHE=none under kernel replay does not show the cold flush's state: every pass after the
# first finds the kernel's own data in L2 (session 9: 99% L2 hits, 5.6 us, for `vectorized` at 2048^2,
# which the harness times at 9.3 us cold). For the cold state use NCU_CACHE=none NCU_REPLAY=application
# with a short NCU_METRICS list (each pass then follows the harness's flush).
# SANITIZE (optional): memcheck, racecheck, or both (comma-separated): after the passes (and Nsight Compute),
# compute-sanitizer over the GPU tests SANITIZE_FILTER (default TEST_FILTER; racecheck: the same less the
# parameterized RepeatedRunsAreBitIdentical tests (sanitize.sh's rule), or RACECHECK_FILTER if set, e.g. a selection of the tests whose kernels
# race-prone code runs in) of the builds SANITIZE_BUILDS
# (space-separated names as in the output files; default every tested build but the default, whose tree
# run_suite.sh checks; under SAME_BINARY, the one build), each tool's run split by GoogleTest's sharding into
# SANITIZE_SHARDS concurrent processes (default 4: a sanitized test keeps a CPU core busy and leaves the GPU
# mostly idle), each cut at SANITIZE_TIMEOUT seconds (default 300), the builds at once (scripts/sanitize.sh).
# OUTDIR/<name>_<tool>_<k>.log. A shard fails unless it ends with a summary of 0 errors (memcheck) or 0 hazards,
# warnings included (racecheck); a cut shard fails.
# env:SOLBENCH_NAME=VALUE in place of a DEFINE: no build of its own, but the default build's binaries run with
# that harness setting (bench/harness/timer_settings.h), as a build named env_SOLBENCH_NAME_VALUE: a timing-protocol
# experiment measured the way a kernel's is (e.g. env:SOLBENCH_HOT_WINDOW_US=500). Its tests are the default's;
# Nsight Compute runs it with the setting, and the sanitizers leave it out (the default's binary).
# Exit status: 1 if any build, test, profile or sanitizer run failed.
set -uo pipefail
out=${1:?usage: scripts/gpu_experiments.sh OUTDIR DEFINE...}
shift
cand='' base=''
if [ -n "${SAME_BINARY:-}" ]; then
  [[ $SAME_BINARY =~ ^([a-z0-9_]+(,[a-z0-9_]+)*):([a-z0-9_]+)$ ]] &&
    [ "$(tr ',' '\n' <<<"${BASH_REMATCH[1]},${BASH_REMATCH[3]}" | sort | uniq -d)" = "" ] ||
    { echo "gpu_experiments.sh: SAME_BINARY must be CANDIDATE[,CANDIDATE...]:BASELINE, distinct variant names, got '$SAME_BINARY'" >&2; exit 2; }
  cand=${BASH_REMATCH[1]} base=${BASH_REMATCH[3]}
  [ $# -eq 0 ] || { echo "gpu_experiments.sh: SAME_BINARY times variants of one build: name no DEFINE" >&2; exit 2; }
else
  [ $# -gt 0 ] || { echo "gpu_experiments.sh: name at least one DEFINE (e.g. SB_DECODE_EXPERIMENT=3)" >&2; exit 2; }
  for d in "$@"; do
    case $d in
      env:*) [[ $d =~ ^env:SOLBENCH_[A-Z0-9_]+=[A-Za-z0-9._-]+$ ]] ||
        { echo "gpu_experiments.sh: an environment variant must be env:SOLBENCH_NAME=VALUE (letters, digits, . _ -), got '$d'" >&2; exit 2; } ;;
    esac
  done
fi
# "A=1 -DB=2" -> A_1__B_2; "env:SOLBENCH_X=5" -> env_SOLBENCH_X_5
name_of() { local n=${1/#env:/env_}; n=${n// -D/__}; n=${n//=/_}; echo "${n// /_}"; }
control=${CONTROL:-}
if [ -n "$control" ]; then  # a build of this command, named as in the output files
  names=()
  if [ -n "$cand" ]; then IFS=, read -ra names <<<"$cand"; else for d in "$@"; do names+=("$(name_of "$d")"); done; fi
  printf '%s\n' "${names[@]}" | grep -qxF -- "$control" ||
    { echo "gpu_experiments.sh: CONTROL '$control' names none of this command's builds other than the default (${names[*]})" >&2; exit 2; }
fi
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
bench=${BENCH:-bench_attention}
case $bench in
  bench_attention)
    test_filter=${TEST_FILTER:-*Attention*:*DecodeSplitk*:*TiledFlash*:*WgmmaFlash*}
    bench_filter=${BENCH_FILTER:-^attention/(tiled_flash|wgmma_flash|decode_splitk|torch_sdpa_flash|torch_sdpa_cudnn)/.*/cold}
    [ -n "$cand" ] && bench_filter=${BENCH_FILTER:-^attention/(${cand//,/|}|$base)/} ;;
  bench_rmsnorm)
    test_filter=${TEST_FILTER:-*RmsNorm*}
    bench_filter=${BENCH_FILTER:-^rmsnorm/(vectorized|torch_rms_norm)/.*/cold}
    [ -n "$cand" ] && bench_filter=${BENCH_FILTER:-^rmsnorm/(${cand//,/|}|$base)/} ;;
  *) echo "gpu_experiments.sh: BENCH must be bench_attention or bench_rmsnorm, got '$bench'" >&2; exit 2 ;;
esac
case ${DEFAULT_TORCH:-} in
  "") case $bench_filter in *torch*) default_torch=AUTO ;; *) default_torch=OFF ;; esac ;;
  AUTO | ON | OFF) default_torch=$DEFAULT_TORCH ;;
  *) echo "gpu_experiments.sh: DEFAULT_TORCH must be AUTO, ON or OFF, got '${DEFAULT_TORCH}'" >&2; exit 2 ;;
esac
passes=${PASSES:-2}
[[ $passes =~ ^[1-9][0-9]*$ ]] || { echo "gpu_experiments.sh: PASSES must be a positive integer, got '$passes'" >&2; exit 2; }
case ${NCU_CACHE:-all} in
  all | none) ;;
  *) echo "gpu_experiments.sh: NCU_CACHE must be all or none, got '${NCU_CACHE}'" >&2; exit 2 ;;
esac
case ${NCU_REPLAY:-kernel} in
  kernel | application) ;;
  *) echo "gpu_experiments.sh: NCU_REPLAY must be kernel or application, got '${NCU_REPLAY}'" >&2; exit 2 ;;
esac
sanitize_tools=()
if [ -n "${SANITIZE:-}" ]; then
  IFS=, read -ra sanitize_tools <<<"$SANITIZE"
  for t in "${sanitize_tools[@]}"; do
    case $t in
      memcheck | racecheck) ;;
      *) echo "gpu_experiments.sh: SANITIZE must list memcheck and/or racecheck, got '${SANITIZE}'" >&2; exit 2 ;;
    esac
  done
fi
for v in SANITIZE_SHARDS SANITIZE_TIMEOUT; do
  [ -z "${!v:-}" ] || [[ ${!v} =~ ^[1-9][0-9]*$ ]] ||
    { echo "gpu_experiments.sh: $v must be a positive integer, got '${!v}'" >&2; exit 2; }
done
ncu_what=(--set "${NCU_SET:-full}")
[ -n "${NCU_METRICS:-}" ] && ncu_what=(--metrics "$NCU_METRICS")
if [ "$bench" = bench_attention ]; then
  ncu_kernels=${NCU_KERNELS:-regex:split_kernel|combine_kernel}
  ncu_filter=${NCU_FILTER:-^attention/decode_splitk/bf16/.*/cold}
else
  ncu_kernels=${NCU_KERNELS:-regex:^kernel$}
  ncu_filter=${NCU_FILTER:-^rmsnorm/vectorized/bf16/.*/cold}
fi
status=0

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu_experiments.sh: no NVIDIA GPU here (nvidia-smi -L failed)" >&2
  exit 3
fi

count_tests() {  # test binary, gtest filter: how many tests the filter names
  "$1" --gtest_filter="$2" --gtest_list_tests 2>/dev/null | grep -c '^  '
}
configure_build() {  # source_dir build_dir torch cuda_flags log
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH="$3" \
    "-DCMAKE_CUDA_FLAGS=$4" "-DCMAKE_CXX_FLAGS=$4" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 >"$5" 2>&1 &&
    cmake --build "$2" -j "$(nproc)" --target "$bench" test_gpu >>"$5" 2>&1
}

src=$root
if [ -n "${PATCH:-}" ]; then
  src=$root/build/exp_src
  rm -rf "$src" && mkdir -p "$src" &&
    tar -C "$root" --exclude=./build --exclude=./.git -cf - . | tar -C "$src" -xf - ||
    { echo "gpu_experiments.sh: could not copy the tree to $src" >&2; exit 2; }
  for p in $PATCH; do  # several patches: space-separated, applied in order
    patch -d "$src" -p1 --quiet <"$(cd "$(dirname "$p")" && pwd)/$(basename "$p")" ||
      { echo "gpu_experiments.sh: $p does not apply to this tree" >&2; exit 2; }
  done
fi

builds=(default)
declare -A env_of=()  # an environment variant's build name -> its NAME=VALUE
bin_dir() { [ -n "${env_of[$1]:-}" ] && echo "$root/build/exp_default" || echo "$root/build/exp_$1"; }
as_build() {  # build name, command...: the command, under the build's setting where it is an environment variant
  local n=$1; shift
  if [ -n "${env_of[$n]:-}" ]; then env "${env_of[$n]}" "$@"; else "$@"; fi
}
default_src=$root
[ -n "$cand" ] && default_src=$src  # SAME_BINARY: the one build holds the candidate variant
configure_build "$default_src" "$root/build/exp_default" "$default_torch" "" "$out/default_build.log" &
for d in "$@"; do
  n=$(name_of "$d")
  builds+=("$n")
  if [[ $d == env:* ]]; then env_of[$n]=${d#env:}; continue; fi
  configure_build "$src" "$root/build/exp_$n" OFF "-D$d" "$out/${n}_build.log" &
done
wait

tested=()
for n in "${builds[@]}"; do
  if [ -n "${env_of[$n]:-}" ]; then
    if printf '%s\n' "${tested[@]}" | grep -qx default; then
      echo "$n: the default build's binaries with ${env_of[$n]} (its tests are the default's)"; tested+=("$n")
    else
      echo "$n: not benchmarked (the default build it runs was not tested)"; status=1
    fi
    continue
  fi
  b=$root/build/exp_$n
  if [ ! -x "$b/bench/$bench" ]; then
    echo "$n: BUILD FAILED (see ${n}_build.log)"; status=1; continue
  fi
  if [ "$(count_tests "$b/tests/test_gpu" "$test_filter")" -eq 0 ]; then
    echo "$n: TEST_FILTER '$test_filter' names no test of test_gpu; not benchmarked"; status=1; continue
  fi
  if ! SOLBENCH_REQUIRE_GPU=1 "$b/tests/test_gpu" --gtest_filter="$test_filter" --gtest_brief=1 >"$out/${n}_test.log" 2>&1; then
    echo "$n: TESTS FAILED (see ${n}_test.log)"; status=1; continue
  fi
  echo "$n: $(grep -E 'PASSED' "$out/${n}_test.log")"
  tested+=("$n")
done

# PASSES passes over the tested builds, the order reversed every other pass (the GPU drifts within a
# command; scripts/experiment_summary.py compares each build with the default of the same pass).
: >"$out/timings.txt"
for ((k = 1; k <= passes; k++)); do
  order=("${tested[@]}")
  if ((k % 2 == 0)); then
    order=()
    for ((i = ${#tested[@]} - 1; i >= 0; i--)); do order+=("${tested[i]}"); done
  fi
  for n in "${order[@]}"; do
    # The GPU's state as each timing starts (the drift between passes is what the passes are for).
    echo "$k $n $(nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1 | head -1)" \
      >>"$out/gpu_state.txt"
    json=$out/$n.json
    ((k > 1)) && json=$out/${n}_pass$k.json
    as_build "$n" "$(bin_dir "$n")/bench/$bench" --shapes="${SHAPES:-anchors}" --dtypes="${DTYPES:-bf16}" --benchmark_filter="$bench_filter" \
      --benchmark_repetitions="${REPETITIONS:-3}" --benchmark_display_aggregates_only=true \
      --benchmark_out="$json" --benchmark_out_format=json ${BENCH_ARGS:-} 2>&1 |
      awk -v n="$n" -v k="$k" -v cand="$cand" -v base="$base" '/_median/ {
        sub("/manual_time_median", "", $1); b = n
        # SAME_BINARY: a case of a candidate variant reads as a build of that name, named as the baseline case.
        if (cand != "" && split($1, p, "/") > 1 && index("," cand ",", "," p[2] ",")) { b = p[2]; sub("/" p[2] "/", "/" base "/", $1) }
        print k, b, $1, $2 }' |
      tee -a "$out/timings.txt" || status=1
  done
  # A summary after every pass, so that a command cut by its time limit still leaves one (marked where
  # its ratios rest on one pass).
  ((k < passes)) && [ -s "$out/timings.txt" ] &&
    python3 "$root/scripts/experiment_summary.py" "$out/timings.txt" ${control:+--control "$control"} >"$out/summary.txt" 2>&1 || true
done
if [ -s "$out/timings.txt" ]; then
  python3 "$root/scripts/experiment_summary.py" "$out/timings.txt" ${control:+--control "$control"} | tee "$out/summary.txt" || status=1
fi
if [ -n "${NCU_SHAPES:-}" ]; then
  for n in "${tested[@]}"; do
    if as_build "$n" ncu --clock-control none --cache-control "${NCU_CACHE:-all}" --replay-mode "${NCU_REPLAY:-kernel}" \
      -k "$ncu_kernels" "${ncu_what[@]}" \
      --csv --page raw "$(bin_dir "$n")/bench/$bench" --profile --shapes="$NCU_SHAPES" \
      --benchmark_filter="$ncu_filter" >"$out/ncu_$n.csv" 2>&1; then
      gzip -9 -n -f "$out/ncu_$n.csv"
      echo "$n: Nsight Compute -> ncu_$n.csv.gz"
    else
      echo "$n: NSIGHT COMPUTE FAILED (see ncu_$n.csv)"; status=1
    fi
  done
fi
if ((${#sanitize_tools[@]} > 0)); then
  if [ -n "${SANITIZE_BUILDS:-}" ]; then
    read -ra san_builds <<<"$SANITIZE_BUILDS"
  else
    san_builds=()
    for n in "${tested[@]}"; do
      { [ "$n" = default ] && [ -z "$cand" ]; } || [ -n "${env_of[$n]:-}" ] || san_builds+=("$n")
    done
  fi
  san_pids=()
  for n in "${san_builds[@]}"; do
    if [ ! -x "$root/build/exp_$n/tests/test_gpu" ]; then
      echo "$n: NO TEST BINARY TO SANITIZE (SANITIZE_BUILDS names a build that was not built)"; status=1; continue
    fi
    SHARDS=${SANITIZE_SHARDS:-4} TIMEOUT=${SANITIZE_TIMEOUT:-300} \
      "$root/scripts/sanitize.sh" "$root/build/exp_$n/tests/test_gpu" "$out/$n" "$SANITIZE" "${SANITIZE_FILTER:-$test_filter}" &
    san_pids+=($!)
  done
  for p in "${san_pids[@]}"; do wait "$p" || status=1; done
fi
exit $status
