#!/usr/bin/env bash
# The suite, end to end, on a machine with an NVIDIA GPU. See usage() below (or --help).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prog=scripts/run_suite.sh

usage() {
  cat <<EOF
usage: $prog [options]

Runs the suite on this machine's NVIDIA GPU, in stages; a failed stage does not stop the later ones:
  1. configure (Release; with the PyTorch baselines and bench_e2e when PyTorch is installed) and build
  2. ctest with the GPU tests required (SOLBENCH_REQUIRE_GPU=1), then the harness self-test
  3. each bench binary with repetitions (randomly interleaved), its JSON into DIR/logs/
  4. the cross-check of the harness against triton's do_bench (scripts/crosscheck_torch.py), at the
     shapes of DIR/anchors.json (else results/<gpu>/anchors.json; with neither, every case)
  5. compute-sanitizer memcheck and racecheck over test_gpu (scripts/sanitize.sh)
  6. the profile of one 1b training step with PyTorch's RMSNorm and with ours (train_profile, built with
     PyTorch): per-op tables and the norms' share of the step into DIR/train_profile_<impl>.json, the
     Chrome traces into DIR/logs/train_trace_<impl>.json
  7. DIR/latest.json.xz (the bench JSONs merged), DIR/crosscheck.json, DIR/env.txt, and the report
     (python3 scripts/report.py DIR: DIR/REPORT.md and DIR/plots/)
Logs go to DIR/logs/ (not committed). The command line is recorded in the results' context.

options:
  --out DIR          where the results go (default results/<gpu>/, <gpu> from nvidia-smi's name, e.g. h200)
  --benches LIST     comma-separated, of rmsnorm, attention, e2e, torch (default: every one that was built;
                     e2e is built only with PyTorch; torch, bench/bench_torch.py's torch.compile, Triton,
                     FlexAttention and operator rows, when libsolbench_pybench.so was built and python3
                     imports torch and triton)
  --dtypes LIST      comma-separated, of fp32, fp16, bf16 (default all; e2e runs fp16 and bf16 only)
  --shapes SPEC      passed as --shapes=SPEC to each bench binary: a named set (default, anchors, smoke,
                     decode, prefill: each binary lists its own with --help) and/or shapes of its form
  --filter REGEX     passed as --benchmark_filter=REGEX to each bench binary
  --repetitions N    repetitions of each case (default 5); the median is what is compared and plotted
  --skip LIST        comma-separated stages to leave out: tests, crosscheck, sanitizer, profile
  --build-dir DIR    the CMake build directory (default build/release)
  -h, --help         this text

examples:
  $prog                                           the full suite into results/<gpu>/
  $prog --benches attention --dtypes bf16 --shapes anchors --skip sanitizer
  $prog --benches rmsnorm --shapes 8x5120,1x5120 --out /tmp/mymodel
  $prog --benches e2e --dtypes bf16 --shapes train --skip crosscheck,sanitizer   the training steps

Exit status: 0 when every stage passed, 1 when one failed, 2 on a bad option, 3 without an NVIDIA GPU.

The run never touches DIR/baseline.json.xz, the run the regression gate compares against. To check a
run against it, and to promote a run to the baseline:
  python3 scripts/regress.py results/h200/baseline.json.xz results/h200/latest.json.xz
(a run of part of the suite fails the gate on the baseline's cases it lacks: add --filter REGEX naming the part
it ran, or --allow-missing)
  cp results/h200/latest.json.xz results/h200/baseline.json.xz
To build and run the tests on any machine, GPU or not: cmake --workflow --preset ci
EOF
}

bad() { echo "$prog: $1 (see $prog --help)" >&2; exit 2; }

# --- options ------------------------------------------------------------------------------------------
out="" benches="" dtypes="" shapes="" filter="" reps=5 skip="" build=$root/build/release
given=()  # the options as given, for the recorded command
while (($#)); do
  opt=$1
  case $opt in
    -h | --help) usage; exit 0 ;;
    --out | --benches | --dtypes | --shapes | --filter | --repetitions | --skip | --build-dir)
      (($# >= 2)) || bad "$opt needs a value"
      val=$2; shift 2 ;;
    --*=*) opt=${1%%=*}; val=${1#*=}; shift
      case $opt in --out | --benches | --dtypes | --shapes | --filter | --repetitions | --skip | --build-dir) ;;
        *) bad "unknown option '$opt'" ;; esac ;;
    *) bad "unknown option '$opt'" ;;
  esac
  [ -n "$val" ] || bad "$opt is empty"
  given+=("$opt" "$val")
  case $opt in
    --out) out=$val ;;
    --benches) benches=$val ;;
    --dtypes) dtypes=$val ;;
    --shapes) shapes=$val ;;
    --filter) filter=$val ;;
    --repetitions) reps=$val ;;
    --skip) skip=$val ;;
    --build-dir) build=$val ;;
  esac
done

# Each item of a comma-separated LIST must be one of the allowed words.
check_list() {  # option, value, allowed words...
  local opt=$1 value=$2 item seen=" "
  shift 2
  IFS=, read -ra items <<<"$value"
  ((${#items[@]})) || bad "$opt is empty"
  for item in "${items[@]}"; do
    [[ " $* " == *" $item "* ]] || bad "$opt: '$item' is not one of: $*"
    [[ $seen != *" $item "* ]] || bad "$opt names $item twice"
    seen+="$item "
  done
}
[ -z "$benches" ] || check_list --benches "$benches" rmsnorm attention e2e torch
[ -z "$dtypes" ] || check_list --dtypes "$dtypes" fp32 fp16 bf16
[ -z "$skip" ] || check_list --skip "$skip" tests crosscheck sanitizer profile
[[ $reps =~ ^[1-9][0-9]*$ ]] || bad "--repetitions must be a positive integer, got '$reps'"
if [ -n "$filter" ]; then
  # bash's =~ takes POSIX extended regexes, close enough to Google Benchmark's to catch a malformed one.
  [[ "" =~ $filter ]]
  (($? != 2)) || bad "--filter: '$filter' is not a valid regular expression"
fi
skipping() { [[ ",$skip," == *",$1,"* ]]; }

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "$prog: no NVIDIA GPU on this machine (nvidia-smi -L failed): nothing can be measured here." >&2
  echo "To build and run the tests on any machine: cmake --workflow --preset ci" >&2
  exit 3
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed -E 's/^NVIDIA //; s/[^A-Za-z0-9]+/_/g' | tr 'A-Z' 'a-z')
out=${out:-$root/results/$gpu}
mkdir -p "$out/logs" || bad "--out: cannot create '$out/logs'"
out=$(cd "$out" && pwd)
logs=$out/logs
[[ $build == /* ]] || build=$PWD/$build

status=0
stage() { echo "== $(date +%T) $*" >&2; }
fail() { echo "FAILED: $*" >&2; status=1; }

# --- 1. configure and build ---------------------------------------------------------------------------
{
  date -u +%FT%TZ; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE
  nvcc --version; cmake --version | head -1
  python3 -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)'
} >"$logs/env.txt" 2>&1

stage configure + build
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO \
  -DCMAKE_POLICY_VERSION_MINIMUM=3.5 >"$logs/test.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" >>"$logs/test.log" 2>&1 || { fail build; tail -50 "$logs/test.log" >&2; exit 1; }
grep -E "solbench: libtorch" "$logs/test.log" >&2

# The benches to run, each with its flags; a bad --shapes or --dtypes for one of them fails here, before
# an hour of tests and benchmarks (the binaries check their flags when they list their cases).
# bench_cmd B sets cmd to bench B's command: its binary, or for torch the Python driver of this build.
bench_cmd() {
  if [ "$1" = torch ]; then cmd=(python3 "$root/bench/bench_torch.py" "--build-dir=$build")
  else cmd=("$build/bench/bench_$1"); fi
}
torch_ready() { [ -f "$build/bench/libsolbench_pybench.so" ] && python3 -c 'import torch, triton' 2>/dev/null; }
names=()
declare -A flags
for b in ${benches//,/ }; do names+=("$b"); done
if ((${#names[@]} == 0)); then
  names=(rmsnorm attention)
  if torch_ready; then names+=(torch)
  else echo "bench_torch: needs libsolbench_pybench.so (built with PyTorch) and python3 with torch and triton; skipped" >&2
  fi
  if [ -x "$build/bench/bench_e2e" ]; then names+=(e2e)
  else echo "bench_e2e: not built (it needs PyTorch: install it and run again); skipped" >&2
  fi
fi
for b in "${names[@]}"; do
  if [ "$b" = torch ]; then
    torch_ready || bad "--benches: torch needs $build/bench/libsolbench_pybench.so (built with PyTorch) and python3 with torch and triton"
  else
    [ -x "$build/bench/bench_$b" ] || bad "--benches: bench_$b was not built in $build (bench_e2e needs PyTorch)"
  fi
  d=${dtypes:-fp32,fp16,bf16}
  if [ "$b" = e2e ]; then  # the layer's tolerance comes from a 16-bit dtype
    d=$(tr , '\n' <<<"$d" | grep -E '^(fp16|bf16)$' | paste -sd,)
    if [ -z "$d" ] && [ -z "$benches" ]; then
      echo "bench_e2e: runs fp16 and bf16 only, and --dtypes names neither; skipped" >&2
      unset 'names[-1]'  # e2e, last of the default list
      continue
    fi
    [ -n "$d" ] || bad "--dtypes: bench_e2e runs fp16 and bf16 only, and '$dtypes' names neither"
  fi
  flags[$b]="--dtypes=$d${shapes:+ --shapes=$shapes}"
  bench_cmd "$b"
  msg=$("${cmd[@]}" ${flags[$b]} --benchmark_list_tests 2>&1 >/dev/null) ||
    bad "bench_$b refuses ${flags[$b]}: $msg"
done

# --- 2. tests -----------------------------------------------------------------------------------------
if ! skipping tests; then
  stage ctest
  # A GPU test binary is one ctest test (its cases in one process) and runs beside the others; the bench smoke
  # runs are RUN_SERIAL (ctest runs each alone). The harness self-test times kernels, so it runs once, alone,
  # after ctest, its measurements in the log.
  SOLBENCH_REQUIRE_GPU=1 ctest --test-dir "$build" -j "$(nproc)" --output-on-failure --no-tests=error \
    -E '^test_harness_gpu$' \
    >>"$logs/test.log" 2>&1 || fail "ctest (logs/test.log)"
  grep -E "tests passed|tests failed" "$logs/test.log" >&2
  "$build/tests/test_harness_gpu" >>"$logs/test.log" 2>&1 || fail "harness self-test (logs/test.log)"
fi

# --- 3. benchmarks ------------------------------------------------------------------------------------
# The command that reproduces the run, recorded in the JSON context by the bench binaries (an environment
# variable: --benchmark_context cannot carry '=' or ',' in a value).
SOLBENCH_RUN_COMMAND=$prog
for a in "${given[@]}"; do  # quoted only where the shell needs it
  if [[ $a =~ ^[A-Za-z0-9_./,:=+@-]+$ ]]; then SOLBENCH_RUN_COMMAND+=" $a"
  else SOLBENCH_RUN_COMMAND+=" $(printf %q "$a")"
  fi
done
export SOLBENCH_RUN_COMMAND
rm -f "$logs"/bench_*.json "$logs"/bench_*.json.partial.jsonl "$logs/crosscheck.json"
: >"$logs/bench.log"
for b in "${names[@]}"; do
  stage "bench_$b"
  json=$logs/bench_$b.json
  bench_cmd "$b"
  "${cmd[@]}" ${flags[$b]} ${filter:+"--benchmark_filter=$filter"} --benchmark_repetitions="$reps" \
    --benchmark_display_aggregates_only=true --benchmark_out="$json" --benchmark_out_format=json \
    >>"$logs/bench.log" 2>&1 || fail "bench_$b (logs/bench.log)"
  # A binary cut short leaves what it measured in $json.partial.jsonl (read as an incomplete run); one none of
  # whose cases the filter names exits 0 and leaves an empty file: no JSON, no failure.
  if [ ! -s "$json" ]; then
    rm -f "$json"
    if [ -s "$json.partial.jsonl" ]; then echo "bench_$b: cut short; its finished cases are in $json.partial.jsonl" >&2
    else echo "bench_$b: --filter names none of its cases; no JSON from it" >&2; fi
  fi
  tail -3 "$logs/bench.log" >&2
done
runs=()
for b in "${names[@]}"; do
  for f in "$logs/bench_$b.json" "$logs/bench_$b.json.partial.jsonl"; do
    if [ -s "$f" ]; then runs+=("$f"); break; fi
  done
done

# --- 4. cross-check -----------------------------------------------------------------------------------
if ! skipping crosscheck && ((${#runs[@]})); then
  stage crosscheck with triton do_bench
  anchor_args=()
  for a in "$out/anchors.json" "$root/results/$gpu/anchors.json"; do
    [ -s "$a" ] && { anchor_args=(--anchors "$a"); break; }
  done
  ((${#anchor_args[@]})) || echo "crosscheck: no anchors.json in $out or results/$gpu: every case is checked" >&2
  python3 "$root/scripts/crosscheck_torch.py" "${runs[@]}" -o "$logs/crosscheck.json" "${anchor_args[@]}" 2>&1 |
    tee -a "$logs/bench.log" >&2 || fail "crosscheck (logs/bench.log)"
fi

# --- 5. compute-sanitizer -----------------------------------------------------------------------------
if ! skipping sanitizer; then
  stage compute-sanitizer
  # Every test of test_gpu under memcheck; racecheck leaves out the RepeatedRunsAreBitIdentical twins
  # (sanitize.sh says why). Four concurrent processes a tool, one line each in sanitizer.log.
  "$root/scripts/sanitize.sh" "$build/tests/test_gpu" "$logs/sanitizer" memcheck,racecheck '*' >"$logs/sanitizer.log" 2>&1
  san_rc=$?
  cat "$logs/sanitizer.log" >&2
  ((san_rc == 0)) || fail "compute-sanitizer (logs/sanitizer.log)"
fi

# --- 6. training-step profile -------------------------------------------------------------------------
# One Kineto-profiled step of the 1b model per implementation (bench/train_profile.cpp): its op tables are
# results, its traces (megabytes each) logs. Without PyTorch there is no train_profile, and nothing to do.
rm -f "$out"/train_profile_*.json
if ! skipping profile && [ -x "$build/bench/train_profile" ]; then
  stage train_profile
  if "$build/bench/train_profile" --config 1b --out "$logs" >"$logs/train_profile.log" 2>&1; then
    cp "$logs"/train_profile_*.json "$out/"
  else
    fail "train_profile (logs/train_profile.log)"
  fi
  cat "$logs/train_profile.log" >&2
fi

# --- 7. results and report ----------------------------------------------------------------------------
stage results
if ((${#runs[@]} == 0)); then
  fail "no bench JSON to file (see logs/bench.log)"
elif python3 "$root/scripts/sbresults.py" merge "$out/latest.json.xz" "${runs[@]}"; then
  cp "$logs/env.txt" "$out/env.txt"
  if [ -s "$logs/crosscheck.json" ]; then cp "$logs/crosscheck.json" "$out/crosscheck.json"
  else rm -f "$out/crosscheck.json"  # one from an earlier run does not describe this one
  fi
  # The report names its results folder as the repository does, when the folder is in it.
  rel=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$out" "$root")
  [[ $rel == ../* ]] && rel=$out
  (cd "$root" && python3 scripts/report.py "$rel") || fail "report"
  echo "$prog: results in $out (latest.json.xz, crosscheck.json, env.txt, REPORT.md, plots/)" >&2
else
  fail "merging the bench JSON into $out/latest.json.xz"
fi
stage done, status $status
exit $status
