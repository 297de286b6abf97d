#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: configure (with the PyTorch baselines when PyTorch is installed),
# build, run every test with the GPU tests required, run the benchmarks, cross-check the harness
# against triton's do_bench, and run compute-sanitizer over the GPU tests. Writes into OUTDIR:
#   bench_rmsnorm.json, bench_attention.json, bench_e2e.json   Google Benchmark JSON (repetitions +
#                        aggregates, context); bench_e2e (one decoder layer end to end) exists only when
#                        the build found libtorch
#   crosscheck.json      harness vs do_bench on the same PyTorch op, same GPU, same command
#   layer_timeline.json  bench_e2e's bf16 decode layers kernel by kernel (scripts/layer_timeline.py, CUPTI): the
#                        attention's window inside each layer, ours and PyTorch's, apart from the GEMMs around it;
#                        made after bench_e2e in the call that runs it (SKIP_TIMELINE=1 leaves it out)
#   env.txt              nvidia-smi, compilers, PyTorch: the machine the numbers came from
#   test.log bench.log sanitizer.log, and ncu.csv when NCU=1 (kernel durations and DRAM bytes of the
#   decode-sized RMSNorm cases, from Nsight Compute; NCU_BENCH, NCU_KERNELS, NCU_SHAPES, NCU_FILTER pick others,
#   NCU_SET=full collects every section instead)
# Exit status: non-zero if any stage failed (every stage still runs). Stages can be skipped with
# SKIP_TESTS=1, SKIP_BENCH=1, SKIP_CROSSCHECK=1, SKIP_TIMELINE=1, SKIP_SANITIZER=1 (SANITIZER_FILTER picks the GPU tests it covers, default every
# test of test_gpu, one that names none fails; racecheck leaves out the parameterized RepeatedRunsAreBitIdentical tests, sanitize.sh's rule, unless
# SANITIZER_RACECHECK_FILTER says otherwise; SANITIZER_SHARDS, default 4, the concurrent processes a tool;
# SANITIZER_TIMEOUT cuts each, default never); BENCH_ARGS adds flags to the bench run
# (e.g. BENCH_ARGS='--benchmark_filter=vectorized'); SUITE_COMMAND is recorded in the JSON context
# as the command that reproduces the run. BENCHES (default 'bench_rmsnorm bench_attention bench_e2e') names the
# binaries to run (the default skips bench_e2e, saying so, when the build has no libtorch; named, its absence fails); the JSON of one not named is removed from OUTDIR, unless CONTINUE_RUN=1 says that this
# call continues a run an earlier call began: then it is kept, so a run too long for one sitting is done in
# parts on one GPU (BENCHES=bench_rmsnorm SKIP_CROSSCHECK=1, then CONTINUE_RUN=1 BENCHES=bench_attention;
# the cross-check and the merge take every bench_*.json in OUTDIR, and the merge refuses parts measured on
# another GPU, from another tree or under another protocol; a part on a machine without the earlier parts' GPU,
# or with no earlier part in OUTDIR, exits 2 before its build). A cross-check belongs to the JSON of the call
# that makes it: an earlier crosscheck.json is removed when the bench stage starts. BENCHES may also name
# bench_attention_decode and bench_attention_prefill: bench_attention over its decode or prefill set only (the
# default set is the two), each its own JSON, so that bench_attention, too long for one sitting under the
# interleaved repetitions of protocol v58, is run in two calls (neither together with bench_attention).
set -uo pipefail
out=${1:?usage: scripts/gpu_run.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${BUILD_DIR:-$root/build/release}
reps=${REPETITIONS:-5}
all_benches="bench_rmsnorm bench_attention bench_attention_decode bench_attention_prefill bench_e2e"
benches=${BENCHES-bench_rmsnorm bench_attention bench_e2e}
for b in $benches; do
  case $b in bench_rmsnorm|bench_attention|bench_attention_decode|bench_attention_prefill|bench_e2e) ;;
    *) echo "gpu_run.sh: BENCHES names bench_rmsnorm, bench_attention (or bench_attention_decode, bench_attention_prefill) and/or bench_e2e, got '$b'" >&2; exit 2 ;;
  esac
done
[ -n "${benches// /}" ] || { echo "gpu_run.sh: BENCHES is empty; name bench_rmsnorm, bench_attention and/or bench_e2e (or set SKIP_BENCH=1)" >&2; exit 2; }
# The sanitizer's settings are checked now, not after an hour of benchmarks.
[ -z "${SANITIZER_SHARDS:-}" ] || [[ $SANITIZER_SHARDS =~ ^[1-9][0-9]*$ ]] ||
  { echo "gpu_run.sh: SANITIZER_SHARDS must be a positive integer, got '$SANITIZER_SHARDS'" >&2; exit 2; }
[ -z "${SANITIZER_TIMEOUT:-}" ] || [[ $SANITIZER_TIMEOUT =~ ^[0-9]+$ ]] ||
  { echo "gpu_run.sh: SANITIZER_TIMEOUT must be a whole number of seconds (0: none), got '$SANITIZER_TIMEOUT'" >&2; exit 2; }
if [[ " $benches " == *" bench_attention_"* ]]; then
  [[ " $benches " != *" bench_attention "* ]] ||
    { echo "gpu_run.sh: BENCHES names bench_attention and a part of it; its parts are its decode and prefill sets" >&2; exit 2; }
  [ -z "${ATTENTION_SHAPES:-}" ] ||
    { echo "gpu_run.sh: ATTENTION_SHAPES narrows bench_attention, not its parts (decode, prefill sets)" >&2; exit 2; }
fi
status=0
stage() { echo "== $(date +%T) $*" >&2; }
fail() { echo "FAILED: $*" >&2; status=1; }

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu_run.sh: no NVIDIA GPU here (nvidia-smi -L failed); this script measures on a GPU." >&2
  echo "To build and run the tests on any machine: cmake --workflow --preset ci" >&2
  exit 3
fi
# A part of a run goes on the GPU that measured the parts before it (the merge refuses others). A part that lands
# on another machine fails here, before the build and the benchmarks, rather than at the merge (session 62: the
# machine of parts 1 and 2 was given back idle, and the next one held another H200). So does a part that finds no
# earlier part at all (a fresh machine, or another OUTDIR): it has nothing to continue, and its benchmarks would be
# a run of their own (sessions 59 and 63: part 2 ran its ~430 s alone on a fresh machine, and the budget left after
# it no longer held the whole run again). Without CONTINUE_RUN, a set measured on its own is a run of its own.
if [ -n "${CONTINUE_RUN:-}" ] && [ -z "${SKIP_BENCH:-}" ]; then
  here=$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null | grep '^GPU-' | tr '\n' ' ')
  earlier=""
  for b in $all_benches; do [[ " $benches " != *" $b "* ]] && [ -s "$out/$b.json" ] && earlier+=" $b"; done
  if [ -z "$earlier" ]; then
    echo "gpu_run.sh: CONTINUE_RUN=1, but $out holds no earlier part's JSON (of a binary BENCHES leaves out): nothing" \
      "to continue (a fresh machine, or another OUTDIR?); run the whole run again from its first part, or leave" \
      "CONTINUE_RUN unset to measure BENCHES as a run of its own" >&2
    exit 2
  fi
  for b in $earlier; do
    # sbresults.py reads it as the merge will; a file it cannot read is left for the merge to name.
    was=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import sbresults
try: print(sbresults.load_file(sys.argv[2])[0].get("gpu_uuid", ""))
except sbresults.ResultsError: pass' "$root/scripts" "$out/$b.json")
    if [ -n "$was" ] && [ -n "$here" ] && [[ " $here" != *" $was "* ]]; then
      echo "gpu_run.sh: CONTINUE_RUN=1, but $b.json (an earlier part) was measured on $was and this machine has $here;" \
        "one run = one GPU, so the merge would refuse this part: run the whole run again without CONTINUE_RUN" >&2
      exit 2
    fi
  done
fi

{
  date -u +%FT%TZ; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE
  nvcc --version; cmake --version | head -1
  python3 -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)'
} >"$out/env.txt" 2>&1

stage configure + build
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 >"$out/test.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" >>"$out/test.log" 2>&1 || { fail build; tail -50 "$out/test.log" >&2; exit 1; }
grep -E "solbench: libtorch" "$out/test.log" >&2

if [ -z "${SKIP_TESTS:-}" ]; then
  stage ctest
  # Correctness tests run side by side; the harness self-test is RUN_SERIAL (ctest runs it alone).
  SOLBENCH_REQUIRE_GPU=1 ctest --test-dir "$build" -j "$(nproc)" --output-on-failure --no-tests=error >>"$out/test.log" 2>&1 || fail ctest
  grep -E "tests passed|tests failed" "$out/test.log" >&2
  "$build/tests/test_harness_gpu" >>"$out/test.log" 2>&1 || fail harness self-test
  grep -E "^spin|^clock|^copy|^H200|^vectorized bf16" "$out/test.log" >&2
fi

if [ -z "${SKIP_BENCH:-}" ]; then
  # The command that reproduces the run, recorded in the JSON context by the bench binaries (an
  # environment variable: --benchmark_context cannot carry '=' or ',' in a value).
  export SOLBENCH_RUN_COMMAND="${SUITE_COMMAND:-scripts/gpu_run.sh OUTDIR}"
  : >"$out/bench.log"
  # A binary none of whose cases BENCH_ARGS' filter names exits 0 and leaves an empty --benchmark_out file
  # (Google Benchmark: "Failed to match any benchmarks"): it adds no JSON, and that is not a failure.
  run_bench() {  # the JSON's name (bench_attention_decode: bench_attention over its decode set), then its flags
    local name=$1 binary=${1%_decode}
    binary=${binary%_prefill}
    shift
    stage "$name"
    "$build/bench/$binary" "$@" --benchmark_repetitions="$reps" --benchmark_display_aggregates_only=true \
      --benchmark_out="$out/$name.json" --benchmark_out_format=json ${BENCH_ARGS:-} >>"$out/bench.log" 2>&1 ||
      { fail "$name"; return; }
    if [ ! -s "$out/$name.json" ]; then
      rm -f "$out/$name.json"
      echo "$name: BENCH_ARGS' filter names none of its cases; no JSON from it" >&2
    fi
    tail -3 "$out/bench.log" >&2
  }
  rm -f "$out/crosscheck.json"
  for b in $all_benches; do
    if [ "$b" = bench_e2e ] && [ -z "${BENCHES+set}" ] && [ ! -x "$build/bench/bench_e2e" ]; then
      rm -f "$out/bench_e2e.json" "$out/layer_timeline.json"
      echo "bench_e2e: not built (it needs libtorch: install PyTorch and reconfigure); skipped" >&2
      continue
    fi
    if [[ " $benches " != *" $b "* ]]; then
      if [ ! -s "$out/$b.json" ]; then
        :
      elif [ -n "${CONTINUE_RUN:-}" ]; then
        echo "$b: not in BENCHES; CONTINUE_RUN keeps $b.json from an earlier call ($(date -r "$out/$b.json" -u +%FT%TZ))" >&2
      else
        rm -f "$out/$b.json"
        [ "$b" = bench_e2e ] && rm -f "$out/layer_timeline.json"
        echo "$b: not in BENCHES; its JSON from an earlier call removed (CONTINUE_RUN=1 keeps it)" >&2
      fi
      continue
    fi
    case $b in
      bench_rmsnorm) run_bench bench_rmsnorm ;;
      # ATTENTION_SHAPES (default: the default set) and ATTENTION_DTYPES (default: all) narrow the run.
      bench_attention) run_bench bench_attention --shapes="${ATTENTION_SHAPES:-default}" --dtypes="${ATTENTION_DTYPES:-fp32,fp16,bf16}" ;;
      bench_attention_decode | bench_attention_prefill)
        run_bench "$b" --shapes="${b#bench_attention_}" --dtypes="${ATTENTION_DTYPES:-fp32,fp16,bf16}" ;;
      # The layer needs a 16-bit dtype (its tolerance comes from one): E2E_SHAPES narrows the shapes.
      bench_e2e)
        rm -f "$out/layer_timeline.json"
        run_bench bench_e2e --shapes="${E2E_SHAPES:-default}" --dtypes=fp16,bf16
        # Each bf16 decode layer it measured, kernel by kernel: the attention's own window inside the layer, ours
        # and PyTorch's, which the layer's time mixes with what the attention does to the GEMMs after it.
        if [ -z "${SKIP_TIMELINE:-}" ] && [ -s "$out/bench_e2e.json" ] &&
          grep -q '"e2e/[a-z_]*/bf16/decode/' "$out/bench_e2e.json"; then
          stage layer timeline
          python3 "$root/scripts/layer_timeline.py" --from-bench "$out/bench_e2e.json" --modes cold \
            --lib "$build/bench/libsolbench_probe.so" -o "$out/layer_timeline.json" >>"$out/bench.log" 2>&1 ||
            { rm -f "$out/layer_timeline.json"; fail "layer timeline (bench.log)"; }
          grep -E "^cold (sdpa|solbench) against none" "$out/bench.log" | tail -16 >&2
        fi ;;
    esac
  done
  if [ -z "${SKIP_CROSSCHECK:-}" ]; then
    stage crosscheck with triton do_bench
    # Every RMSNorm baseline case, and the attention baselines at the ANCHORS.md shapes and dtype (the
    # acceptance of the cross-check; CROSSCHECK_ANCHORS= with nothing checks every case, for a long time).
    anchors=${CROSSCHECK_ANCHORS-$root/results/h200/anchors.json}
    anchor_args=()
    [ -n "$anchors" ] && anchor_args=(--anchors "$anchors")
    python3 "$root/scripts/crosscheck_torch.py" "$out"/bench_*.json -o "$out/crosscheck.json" --runs "${CROSSCHECK_RUNS:-5}" \
      --filter="${CROSSCHECK_FILTER:-}" "${anchor_args[@]}" 2>&1 |
      tee -a "$out/bench.log" >&2 || fail crosscheck
  fi
fi

if [ -z "${SKIP_SANITIZER:-}" ]; then
  stage compute-sanitizer
  # Every test of test_gpu (the RMSNorm and attention GPU tests) by default.
  san_filter=${SANITIZER_FILTER:-*}
  # Each tool's run split into SANITIZER_SHARDS concurrent processes (scripts/sanitize.sh; default 4), each
  # cut at SANITIZER_TIMEOUT seconds (default 0: never); sanitizer.log has one line a process, its log beside
  # it. racecheck leaves out the parameterized RepeatedRunsAreBitIdentical tests there (their launches repeat
  # their MatchesReference twins'), unless SANITIZER_RACECHECK_FILTER names its tests. A filter that names no test
  # fails there, rather than pass with nothing sanitized.
  SHARDS=${SANITIZER_SHARDS:-4} TIMEOUT=${SANITIZER_TIMEOUT:-0} RACECHECK_FILTER=${SANITIZER_RACECHECK_FILTER:-} \
    "$root/scripts/sanitize.sh" "$build/tests/test_gpu" "$out/sanitizer" memcheck,racecheck "$san_filter" \
    >"$out/sanitizer.log" 2>&1
  san_rc=$?
  cat "$out/sanitizer.log" >&2
  ((san_rc == 0)) || fail "compute-sanitizer (sanitizer.log)"
fi
if [ -n "${NCU:-}" ]; then
  stage ncu
  # NCU_BENCH=bench_attention NCU_KERNELS='regex:split_kernel|combine' NCU_SHAPES=b1_hq32_hkv8_d128_q1_kv4096
  # NCU_FILTER='decode_splitk/bf16/.*/cold' profiles decode_splitk's two kernels instead.
  # NCU_SET=full collects Nsight Compute's full section set (stall reasons, occupancy, memory tables)
  # instead of the metric list, for a kernel to be dissected rather than timed.
  what=(--metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active)
  [ -n "${NCU_SET:-}" ] && what=(--set "$NCU_SET")
  ncu --clock-control none --cache-control all -k "${NCU_KERNELS:-regex:^kernel$}" --csv --page raw "${what[@]}" \
    "$build/bench/${NCU_BENCH:-bench_rmsnorm}" --profile --shapes="${NCU_SHAPES:-1x4096,64x8192,16384x4096}" \
    --benchmark_filter="${NCU_FILTER:-(vectorized|block_reduce)/bf16/.*/cold}" >"$out/ncu.csv" 2>&1 || fail ncu
fi
stage done, status $status
exit $status
