#!/usr/bin/env bash
# Session 44, c219: register_case's repetition history (every skip now thrown as Unsupported by the bench bodies) on
# the H200: the Release build, test_harness_cpu (its GB-runner test), the CLI test with all three binaries, the
# RMSNorm and attention GPU tests, then the smoke sets of bench_attention (fp32 and bf16: SDPA backends that refuse
# fp32 are skipped) and bench_rmsnorm with 3 interleaved repetitions, their exit status and their JSON's skipped,
# failed and timed cases.
set -u
O=$OUT/o219; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c219.sh "$O/device_command.sh"
export SOLBENCH_GIT_COMMIT=$(cat .devcall/s/sha)
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_WITH_TORCH=AUTO -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > "$O/configure.log" 2>&1 \
  && timeout 300 cmake --build build/release -j 16 > "$O/build.log" 2>&1; rc=$?; t "build rc=$rc"
build/release/tests/test_harness_cpu --gtest_brief=1 > "$O/test_harness_cpu.log" 2>&1; t "test_harness_cpu rc=$? $(grep -E 'PASSED|FAILED' "$O/test_harness_cpu.log" | tail -2 | tr '\n' ' ')"
timeout 120 python3 tests/test_bench_cli.py build/release/bench/bench_rmsnorm build/release/bench/bench_attention build/release/bench/bench_e2e > "$O/bench_cli.log" 2>&1; t "bench_cli rc=$? $(tail -1 "$O/bench_cli.log")"
SOLBENCH_REQUIRE_GPU=1 timeout 120 build/release/tests/test_gpu --gtest_brief=1 > "$O/tests.log" 2>&1; t "test_gpu rc=$? $(grep -E 'PASSED|FAILED' "$O/tests.log" | tail -2 | tr '\n' ' ')"
for b in "bench_attention --shapes=smoke --dtypes=fp32,bf16" "bench_rmsnorm --shapes=t1_h4096,t64_h8192,t2048_h2048 --dtypes=bf16,fp32" "bench_e2e --shapes=smoke --dtypes=bf16"; do
  n=$(echo $b | cut -d' ' -f1)
  timeout 150 build/release/bench/$b --benchmark_repetitions=3 --benchmark_out="$O/$n.json" --benchmark_out_format=json > "$O/$n.log" 2>&1
  t "$n rc=$? $(tail -1 "$O/$n.log")"
  python3 - "$O/$n.json" >> "$O/exp.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["benchmarks"]
err = [r for r in rows if r.get("error_occurred")]
skip = [r for r in err if r.get("error_message", "").startswith("skipped:")]
fail = [r for r in err if not r.get("error_message", "").startswith("skipped:")]
med = [r for r in rows if r.get("aggregate_name") == "median"]
cases = {r["run_name"] for r in rows}
print(f"  {len(cases)} cases, {len(med)} medians, {len(skip)} skipped repetitions, {len(fail)} failed; "
      f"iteration counts equal within each case: {all(len({r['iterations'] for r in rows if r['run_name'] == c and r['run_type'] == 'iteration'}) == 1 for c in cases)}")
for r in skip[:3] + fail[:3]: print("   ", r["run_name"], "|", r["error_message"][:150])
PY
done
cat "$O/exp.txt"
cd "$OUT" && tar czf o219.tgz o219 && rm -rf o219
