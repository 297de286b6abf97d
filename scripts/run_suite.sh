#!/usr/bin/env bash
# The suite, end to end, on a machine with an NVIDIA GPU: build (Release, with the PyTorch baselines
# when PyTorch is installed), test, run every bench binary with repetitions, file the JSON under
# results/<gpu>/ as <date>_<commit>.json and latest.json, and regenerate results/<gpu>/REPORT.md and
# its plots. Logs of the run go to results/<gpu>/logs/ (not committed).
#   scripts/run_suite.sh            # the full suite
#   REPETITIONS=10 scripts/run_suite.sh
#   ATTENTION_DTYPES=bf16 ATTENTION_SHAPES=anchors scripts/run_suite.sh   # a shorter attention run
#   BENCHES=bench_rmsnorm SKIP_CROSSCHECK=1 scripts/run_suite.sh
#   CONTINUE_RUN=1 BENCHES=bench_attention scripts/run_suite.sh   # one run in two parts, same GPU and tree
#                                                                  # (the second files the whole run)
# (every setting of scripts/gpu_run.sh applies; the ones given are recorded with the results)
# Without a GPU it says so and exits non-zero (3).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "run_suite.sh: no NVIDIA GPU on this machine (nvidia-smi -L failed): nothing can be measured here." >&2
  echo "To build and run the tests on any machine: cmake --workflow --preset ci" >&2
  exit 3
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed -E 's/^NVIDIA //; s/[^A-Za-z0-9]+/_/g' | tr 'A-Z' 'a-z')
dest=$root/results/$gpu
logs=$dest/logs
mkdir -p "$logs"
# SOLBENCH_GIT_COMMIT names the commit where the tree is not a git checkout (an exported copy).
commit=${SOLBENCH_GIT_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}
commit=${commit:0:12}
stamp=$(date -u +%Y-%m-%d)_$commit

# The command recorded in the results: this script with the settings that shaped the run.
settings=""
for v in REPETITIONS BENCHES CONTINUE_RUN ATTENTION_SHAPES ATTENTION_DTYPES E2E_SHAPES BENCH_ARGS CROSSCHECK_FILTER CROSSCHECK_ANCHORS CROSSCHECK_RUNS SKIP_TESTS SKIP_BENCH SKIP_CROSSCHECK SKIP_TIMELINE SKIP_SANITIZER \
    SOLBENCH_COLD_HOLD SOLBENCH_COLD_QUEUE SOLBENCH_FLUSH_METHOD SOLBENCH_FLUSH_BYTES SOLBENCH_REST_MS SOLBENCH_MIN_HOLD_US SOLBENCH_PERSISTING_RESET SOLBENCH_WARMUP_SIZING SOLBENCH_HOT_TIMING SOLBENCH_HOT_WINDOW_US SOLBENCH_KV_GAP; do
  [ -n "${!v:-}" ] && settings+="$v=$(printf %q "${!v}") "
done
# gpu_run.sh starts its bench stage by writing bench.log; a call that stopped before it (a usage error, a refused
# CONTINUE_RUN part, a failed build) must not file what logs/ holds from earlier calls as this commit's run.
rm -f "$logs/bench.log"
SUITE_COMMAND="${settings}scripts/run_suite.sh" "$root/scripts/gpu_run.sh" "$logs"
status=$?
if [ -n "${SKIP_BENCH:-}" ]; then
  echo "run_suite.sh: SKIP_BENCH: no benchmarks run, so no results filed (see $logs)" >&2
  exit $status
fi
if [ ! -e "$logs/bench.log" ]; then
  echo "run_suite.sh: gpu_run.sh stopped (status $status) before its benchmarks: no results filed (see its message above)" >&2
  [ $status = 0 ] && status=1
  exit $status
fi
runs=$(ls "$logs"/bench_*.json 2>/dev/null)
if [ -n "$runs" ] && python3 "$root/scripts/sbresults.py" merge "$dest/$stamp.json" $runs; then
  # latest.json links to the stamped run (adopt_run.py keeps one copy of a run in the tree); never write
  # through it, since a committed latest.json links to the committed run, which baseline.json names too.
  ln -sfn "$stamp.json" "$dest/latest.json"
  [ -s "$logs/crosscheck.json" ] && cp "$logs/crosscheck.json" "$dest/crosscheck_latest.json"
  # The layer timeline belongs to this run's bench_e2e; one from an earlier run must not sit beside it.
  if [ -s "$logs/layer_timeline.json" ]; then
    cp "$logs/layer_timeline.json" "$dest/layer_timeline_latest.json"
  else
    rm -f "$dest/layer_timeline_latest.json"
  fi
  # The path as the repository names it: REPORT.md records the command that generates it, and
  # tests/test_committed_results.py regenerates it with that relative path (an absolute one made the
  # README's test command fail after a run in the same checkout, session 11).
  (cd "$root" && python3 scripts/report.py "results/$gpu") || status=1
  echo "run_suite.sh: results in $dest ($stamp.json, latest.json, REPORT.md, plots/)" >&2
else
  echo "run_suite.sh: the bench run wrote no valid JSON; see $logs" >&2
  status=1
fi
exit $status
