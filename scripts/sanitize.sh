#!/usr/bin/env bash
# compute-sanitizer over GPU tests, split by GoogleTest's sharding into concurrent processes.
#   scripts/sanitize.sh TEST_BINARY OUTPREFIX TOOLS FILTER
#   SHARDS=4 TIMEOUT=600 scripts/sanitize.sh build/release/tests/test_gpu out/san memcheck,racecheck '*RmsNorm*'
# TOOLS: memcheck, racecheck, or both, comma-separated. Every shard of every tool runs at once: a sanitized test
# keeps one CPU core busy and leaves the GPU mostly idle, so SHARDS processes a tool (default 4) finish about
# SHARDS times sooner on a machine with the cores. racecheck, the slow tool, takes FILTER less the parameterized
# RepeatedRunsAreBitIdentical tests (*.RepeatedRunsAreBitIdentical/*): each launches its suite's MatchesReference
# (or MatchesFp64Reference) test's kernel with the same parameter, so the same inputs, twice, and racecheck judges
# a launch's shared-memory accesses, which those fix, so they add time, not coverage (with them, racecheck over
# every attention GPU test does not finish in hours). DecodeSplitk.RepeatedRunsAreBitIdentical, a plain test of
# a shape no other test has, stays in. tests/test_sanitizer_filter.py checks the rule against test_gpu's own list.
# GoogleTest's negative patterns follow a filter's first '-'. RACECHECK_FILTER, if set, replaces that filter.
# TIMEOUT cuts each process at that many seconds (default 0: never). ONLY_SHARDS (comma-separated indices below
# SHARDS; default all) runs those shards alone: a sanitizer pass longer than one time limit goes in parts, the
# same SHARDS in each, each part naming the shards it takes.
# Writes OUTPREFIX_<tool>_<k>.log (the whole GoogleTest output, so a cut shard's log shows how far it got) and
# prints one line a process, named by the log: its sanitizer summary and GoogleTest's count, or SANITIZER
# FAILED and why. A process passes only if it exits 0 and its summary reads 0 errors (memcheck) or 0 hazards,
# warnings included (racecheck); one cut by TIMEOUT fails. A filter that names no test fails that tool (it
# would otherwise pass with nothing sanitized). The tests run with SOLBENCH_REQUIRE_GPU=1: without a GPU they
# fail rather than skip.
# Exit status: 0 when every process passed, 1 when any failed, 2 on bad usage.
set -uo pipefail
usage() { echo "sanitize.sh: $1 (usage: scripts/sanitize.sh TEST_BINARY OUTPREFIX TOOLS FILTER)" >&2; exit 2; }
[ $# -eq 4 ] || usage "expected 4 arguments, got $#"
binary=$1 prefix=$2 tools_arg=$3 filter=$4
[ -x "$binary" ] || usage "TEST_BINARY '$binary' is not an executable file"
[ -n "$filter" ] || usage "FILTER is empty"
IFS=, read -ra tools <<<"$tools_arg"
((${#tools[@]} > 0)) || usage "TOOLS is empty"
for t in "${tools[@]}"; do
  case $t in memcheck | racecheck) ;; *) usage "TOOLS must list memcheck and/or racecheck, got '$tools_arg'" ;; esac
done
shards=${SHARDS:-4} limit=${TIMEOUT:-0}
[[ $shards =~ ^[1-9][0-9]*$ ]] || usage "SHARDS must be a positive integer, got '$shards'"
[[ $limit =~ ^[0-9]+$ ]] || usage "TIMEOUT must be a whole number of seconds (0: none), got '$limit'"
run_shards=()
if [ -n "${ONLY_SHARDS:-}" ]; then
  IFS=, read -ra run_shards <<<"$ONLY_SHARDS"
  for k in "${run_shards[@]}"; do
    [[ $k =~ ^[0-9]+$ ]] && ((k < shards)) || usage "ONLY_SHARDS must list shard indices below SHARDS=$shards, got '$ONLY_SHARDS'"
  done
else
  for ((k = 0; k < shards; k++)); do run_shards+=("$k"); done
fi
mkdir -p "$(dirname "$prefix")" || usage "cannot create the folder of OUTPREFIX '$prefix'"
label=$(basename "$prefix")

status=0 pids=() logs=()
for t in "${tools[@]}"; do
  f=$filter
  if [ "$t" = racecheck ]; then
    if [ -n "${RACECHECK_FILTER:-}" ]; then f=$RACECHECK_FILTER
    elif [[ $filter == *-* ]]; then f="$filter:*.RepeatedRunsAreBitIdentical/*"
    else f="$filter-*.RepeatedRunsAreBitIdentical/*"
    fi
  fi
  if [ "$("$binary" --gtest_filter="$f" --gtest_list_tests 2>/dev/null | grep -c '^  ')" -eq 0 ]; then
    echo "$label: the $t filter '$f' names no test of $(basename "$binary"); nothing sanitized"
    status=1
    continue
  fi
  for k in "${run_shards[@]}"; do
    log=${prefix}_${t}_$k.log
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$k SOLBENCH_REQUIRE_GPU=1 timeout "$limit" \
      compute-sanitizer --tool "$t" --error-exitcode 9 "$binary" --gtest_filter="$f" >"$log" 2>&1 &
    pids+=($!) logs+=("$log")
  done
done
for i in "${!pids[@]}"; do
  wait "${pids[i]}"
  rc=$? log=${logs[i]}
  name=$(basename "$log" .log)
  summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)
  tests=$(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' "$log" | tr '\n' ' ' | sed 's/ *$//')
  if ((rc == 0)) && [[ $summary =~ (ERROR\ SUMMARY:\ 0\ errors|RACECHECK\ SUMMARY:\ 0\ hazards) ]]; then
    echo "$name: ${summary#========= }, ${tests:-no test count}"
  elif ((rc == 124)); then
    echo "$name: SANITIZER FAILED (cut at TIMEOUT=$limit s before its summary; see $(basename "$log"))"
    status=1
  else
    echo "$name: SANITIZER FAILED (exit $rc${summary:+, ${summary#========= }}${tests:+, $tests}; see $(basename "$log"))"
    status=1
  fi
done
exit $status
