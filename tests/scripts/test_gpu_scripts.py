"""scripts/run_suite.sh and scripts/sanitize.sh without a GPU.

run_suite.sh: its options (a bad one exits 2 and names it, --help lists every one), the exit 3 without a
GPU (a failing nvidia-smi stands first on PATH, so the result is the same on a GPU machine), and a whole
run with stand-ins for nvidia-smi, cmake and the bench binaries in a copy of the scripts: what it files in
the results folder, what it passes each binary, and the command it records. sanitize.sh: its shards, its
verdicts and its racecheck rule with a stand-in compute-sanitizer."""
import json
import lzma
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
HERE = Path(__file__).resolve().parent
FLAGS = ("--out", "--benches", "--dtypes", "--shapes", "--filter", "--repetitions", "--skip", "--build-dir")


def script_env(**overrides) -> dict:
    """This process's environment with `overrides`, less the variables the scripts or the benches read, so
    that a caller's setting does not change the script under test."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SOLBENCH_", "SHARDS", "TIMEOUT", "RACECHECK_FILTER", "FAKE_"))}
    return env | overrides


def run_suite(*args, path=None, cwd=None, script=SCRIPTS / "run_suite.sh"):
    env = script_env(PATH=f"{path}:{os.environ['PATH']}" if path else os.environ["PATH"])
    return subprocess.run(["bash", str(script), *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120)


class Options(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        bin_dir = Path(self.tmp.name)
        (bin_dir / "nvidia-smi").write_text("#!/bin/sh\nexit 9\n")
        (bin_dir / "nvidia-smi").chmod(0o755)
        self.path = str(bin_dir)

    def test_help_lists_every_flag_and_how_to_promote_a_baseline(self):
        for arg in ("--help", "-h"):
            r = run_suite(arg, path=self.path)
            self.assertEqual(r.returncode, 0, r.stderr)
            for flag in FLAGS:
                self.assertRegex(r.stdout, rf"\n  {flag} ", flag)
            self.assertIn("cp results/h200/latest.json.xz results/h200/baseline.json.xz", r.stdout)
            self.assertIn("scripts/regress.py", r.stdout)

    def test_every_flag_in_the_script_is_in_its_help(self):
        text = (SCRIPTS / "run_suite.sh").read_text()
        self.assertEqual(set(re.findall(r"^    (--[a-z-]+)\) ", text, re.M)), set(FLAGS))

    def test_without_a_gpu_it_says_so_and_exits_3(self):
        for args in ((), ("--benches", "rmsnorm", "--repetitions", "3")):
            with self.subTest(args=args):
                r = run_suite(*args, path=self.path)
                self.assertEqual(r.returncode, 3, r.stderr)
                self.assertIn("no NVIDIA GPU on this machine", r.stderr)
                self.assertIn("cmake --workflow --preset ci", r.stderr)

    def test_a_bad_option_exits_2_and_names_it(self):
        for args, message in (
                (("--bogus",), "unknown option '--bogus'"),
                (("results",), "unknown option 'results'"),
                (("--out",), "--out needs a value"),
                (("--out=",), "--out is empty"),
                (("--benches", "rmsnorm,gemm"), "--benches: 'gemm' is not one of: rmsnorm attention e2e"),
                (("--benches", "rmsnorm,rmsnorm"), "--benches names rmsnorm twice"),
                (("--dtypes", "fp8"), "--dtypes: 'fp8' is not one of: fp32 fp16 bf16"),
                (("--skip", "bench"), "--skip: 'bench' is not one of: tests crosscheck sanitizer"),
                (("--repetitions", "0"), "--repetitions must be a positive integer, got '0'"),
                (("--repetitions=five",), "--repetitions must be a positive integer, got 'five'"),
                (("--filter", "vectorized/("), "--filter: 'vectorized/(' is not a valid regular expression")):
            with self.subTest(args=args):
                r = run_suite(*args, path=self.path)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(message, r.stderr)
                self.assertNotIn("Traceback", r.stderr)


# A bench binary's stand-in: lists its cases (exit 2 for --shapes=bad, as the binaries refuse a bad shape),
# or writes a synthetic run (tests/scripts/gbfake.py) to --benchmark_out, its flags and the recorded command in
# the context.
FAKE_BENCH = """#!/usr/bin/env python3
import os, sys
sys.path.insert(0, {here!r})
import gbfake
args = sys.argv[1:]
op = os.path.basename(sys.argv[0])[len("bench_"):]
if "--shapes=bad" in args:
    sys.exit(print("--shapes: unknown set 'bad'", file=sys.stderr) or 2)
if "--benchmark_list_tests" in args:
    sys.exit(0)
out = next(a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out="))
if any(a.startswith("--benchmark_filter=nothing") for a in args):
    open(out, "w").close()
    sys.exit(0)
cases = gbfake.rmsnorm_grid() if op == "rmsnorm" else gbfake.attention_set() if op == "attention" else [
    gbfake.e2e("torch_layer", "decode", 1, 4096)]
ctx = gbfake.context(executable=sys.argv[0], date="2026-01-01T00:00:0%d" % ["rmsnorm", "attention", "e2e"].index(op),
                     args=" ".join(args), command=os.environ.get("SOLBENCH_RUN_COMMAND", ""))
gbfake.write(out, gbfake.run(cases, reps=2, ctx=ctx))
sys.exit(int(os.environ.get("FAKE_BENCH_RC_" + op, "0")))
"""


class RunSuiteFiling(unittest.TestCase):
    """A whole run_suite.sh run past the GPU check in a copy of the scripts, with stand-ins for nvidia-smi,
    cmake, ctest and the bench binaries, and a report.py that records how it is called."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        d = Path(self.tmp.name)
        self.root, self.bin, self.build = d / "repo", d / "bin", d / "repo" / "build" / "release"
        (self.root / "scripts").mkdir(parents=True)
        for name in ("run_suite.sh", "sbresults.py"):
            shutil.copy(SCRIPTS / name, self.root / "scripts" / name)
        (self.root / "scripts" / "report.py").write_text(
            "import os, sys\nopen(os.path.join(sys.argv[1], 'REPORT.md'), 'w').write(' '.join(sys.argv[1:]) + "
            "' from ' + os.getcwd() + '\\n')\n")
        (self.build / "bench").mkdir(parents=True)
        self.bin.mkdir()
        (self.bin / "nvidia-smi").write_text(
            "#!/bin/sh\ncase $1 in --query-gpu=name) echo 'NVIDIA H200' ;; *) echo 'GPU 0: NVIDIA H200' ;; esac\n")
        (self.bin / "cmake").write_text("#!/bin/sh\necho 'solbench: libtorch not found'\n")
        (self.bin / "ctest").write_text("#!/bin/sh\necho '100% tests passed, 0 tests failed out of 3'\n")
        for op in ("rmsnorm", "attention"):
            (self.build / "bench" / f"bench_{op}").write_text(FAKE_BENCH.format(here=str(HERE)))
        for f in list(self.bin.iterdir()) + list((self.build / "bench").iterdir()):
            f.chmod(0o755)
        self.dest = self.root / "results" / "h200"

    def suite(self, *args, env=None):
        full = script_env(PATH=f"{self.bin}:{os.environ['PATH']}", **(env or {}))
        return subprocess.run(["bash", str(self.root / "scripts" / "run_suite.sh"), "--skip",
                               "tests,crosscheck,sanitizer", *args], capture_output=True, text=True, env=full,
                              cwd=self.tmp.name, timeout=120)

    def latest(self, dest=None):
        with lzma.open((dest or self.dest) / "latest.json.xz", "rt") as f:
            return json.load(f)

    def test_a_run_files_latest_env_and_the_report_in_results_gpu(self):
        (self.dest).mkdir(parents=True)
        (self.dest / "baseline.json.xz").write_bytes(b"the baseline")
        (self.dest / "crosscheck.json").write_text("an earlier run's")
        r = self.suite("--repetitions", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bench_e2e: not built", r.stderr)
        doc = self.latest()
        names = {b["name"].split("/")[0] for b in doc["benchmarks"]}
        self.assertEqual(names, {"rmsnorm", "attention"})
        self.assertEqual(doc["context"]["command"], "scripts/run_suite.sh --skip tests,crosscheck,sanitizer "
                         "--repetitions 2")
        self.assertIn("--benchmark_repetitions=2", doc["context"]["args"])
        self.assertIn("--dtypes=fp32,fp16,bf16", doc["context"]["args"])
        self.assertNotIn("--shapes", doc["context"]["args"])
        self.assertEqual((self.dest / "baseline.json.xz").read_bytes(), b"the baseline")
        self.assertFalse((self.dest / "crosscheck.json").exists())  # an earlier run's does not describe this one
        self.assertTrue((self.dest / "env.txt").is_file())
        self.assertEqual(sorted(p.name for p in (self.dest / "logs").glob("bench_*.json")),
                         ["bench_attention.json", "bench_rmsnorm.json"])
        # The report is made from the repository's root with the path as the repository names it.
        self.assertEqual((self.dest / "REPORT.md").read_text(), f"results/h200 from {self.root}\n")

    def test_the_flags_reach_each_binary_and_out_takes_the_results_elsewhere(self):
        out = Path(self.tmp.name) / "elsewhere"
        r = self.suite("--out", str(out), "--benches", "rmsnorm", "--dtypes", "bf16", "--shapes", "anchors,8x5120",
                       "--filter", "vectorized", "--build-dir", str(self.build))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(self.dest.exists())
        args = self.latest(out)["context"]["args"]
        for flag in ("--dtypes=bf16", "--shapes=anchors,8x5120", "--benchmark_filter=vectorized",
                     "--benchmark_repetitions=5"):
            self.assertIn(flag, args)
        self.assertEqual({b["name"].split("/")[0] for b in self.latest(out)["benchmarks"]}, {"rmsnorm"})
        self.assertEqual((out / "REPORT.md").read_text().split(" from ")[0], str(out))

    def test_a_shapes_value_a_binary_refuses_exits_2_before_the_benchmarks(self):
        r = self.suite("--shapes", "bad")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("bench_rmsnorm refuses --dtypes=fp32,fp16,bf16 --shapes=bad: --shapes: unknown set 'bad'",
                      r.stderr)
        self.assertFalse((self.dest / "latest.json.xz").exists())

    def test_a_value_with_spaces_is_recorded_quoted(self):
        r = self.suite("--filter", "vectorized/bf16/t1 |x")
        self.assertEqual(r.returncode, 0, r.stderr)
        command = self.latest()["context"]["command"]
        self.assertEqual(shlex.split(command)[-2:], ["--filter", "vectorized/bf16/t1 |x"])

    def test_dtypes_without_a_16_bit_one_leave_out_bench_e2e_unless_it_is_named(self):
        shutil.copy(self.build / "bench" / "bench_rmsnorm", self.build / "bench" / "bench_e2e")
        r = self.suite("--dtypes", "fp32")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bench_e2e: runs fp16 and bf16 only, and --dtypes names neither; skipped", r.stderr)
        self.assertFalse((self.dest / "logs" / "bench_e2e.json").exists())
        r = self.suite("--dtypes", "fp32", "--benches", "e2e")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--dtypes: bench_e2e runs fp16 and bf16 only, and 'fp32' names neither", r.stderr)

    def test_a_bench_that_was_not_built_is_a_usage_error(self):
        r = self.suite("--benches", "e2e")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--benches: bench_e2e was not built", r.stderr)

    def test_a_filter_naming_no_case_of_any_binary_files_nothing_and_fails(self):
        (self.dest).mkdir(parents=True)
        r = self.suite("--filter", "nothing")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("bench_rmsnorm: --filter names none of its cases; no JSON from it", r.stderr)
        self.assertIn("FAILED: no bench JSON to file", r.stderr)
        self.assertFalse((self.dest / "latest.json.xz").exists())

    def test_a_failing_binary_fails_the_run_and_its_json_is_still_filed(self):
        r = self.suite(env={"FAKE_BENCH_RC_attention": "1"})
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("FAILED: bench_attention (logs/bench.log)", r.stderr)
        self.assertTrue((self.dest / "latest.json.xz").is_file())

    def test_the_training_profile_files_its_tables_in_results_and_its_traces_in_logs(self):
        self.write_train_profile(rc=0)
        r = self.suite()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(p.name for p in self.dest.glob("train_*.json")),
                         ["train_profile_solbench.json", "train_profile_torch_eager.json"])
        self.assertEqual(sorted(p.name for p in (self.dest / "logs").glob("train_trace_*.json")),
                         ["train_trace_solbench.json", "train_trace_torch_eager.json"])
        self.assertIn("--config 1b", (self.dest / "logs" / "train_profile.log").read_text())
        r = self.suite("--skip", "tests,crosscheck,sanitizer,profile")  # the later --skip wins; the tables go
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(list(self.dest.glob("train_profile_*.json")), [])

    def test_a_failing_training_profile_fails_the_run_and_the_report_is_still_made(self):
        self.write_train_profile(rc=1)
        r = self.suite()
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAILED: train_profile (logs/train_profile.log)", r.stderr)
        self.assertEqual(list(self.dest.glob("train_profile_*.json")), [])
        self.assertTrue((self.dest / "REPORT.md").is_file())

    def write_train_profile(self, rc):
        """A stand-in for bench/train_profile: its files for both implementations into --out, its arguments on
        stdout, exit `rc`."""
        fake = self.build / "bench" / "train_profile"
        fake.write_text("#!/bin/sh\necho \"train_profile $*\"\nout=$4\n"
                        f"[ {rc} = 0 ] || exit {rc}\n"
                        "for i in torch_eager solbench; do echo '{}' >$out/train_profile_$i.json; "
                        "echo '{}' >$out/train_trace_$i.json; done\n")
        fake.chmod(0o755)

    def test_an_earlier_runs_bench_json_is_not_merged(self):
        logs = self.dest / "logs"
        logs.mkdir(parents=True)
        (logs / "bench_e2e.json").write_text("an earlier run's, unreadable")
        r = self.suite("--benches", "rmsnorm")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse((logs / "bench_e2e.json").exists())

    def test_a_build_that_fails_stops_the_run(self):
        (self.bin / "cmake").write_text("#!/bin/sh\necho 'error: no CUDA compiler'\nexit 1\n")
        r = self.suite()
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("FAILED: build", r.stderr)
        self.assertIn("error: no CUDA compiler", r.stderr)
        self.assertFalse((self.dest / "latest.json.xz").exists())


class SanitizeShards(unittest.TestCase):
    """scripts/sanitize.sh with stand-ins for compute-sanitizer and the test binary: each tool's shards run at once,
    a process passes only on exit 0 with a clean summary, one cut by TIMEOUT or with errors fails, a filter naming
    no test fails, and bad usage exits 2."""

    # compute-sanitizer's stand-in: runs the binary, then prints the tool's summary; FAKE_SAN_ERRORS=<tool><shard>
    # makes that process report hazards or errors and exit with --error-exitcode, FAKE_SAN_SLEEP=<tool><shard> makes
    # it hang.
    FAKE_SANITIZER = "\n".join([
        "#!/bin/bash",
        "while [ $# -gt 0 ]; do case $1 in --tool) tool=$2; shift 2 ;; --error-exitcode) code=$2; shift 2 ;; *) break ;; esac; done",
        'echo "========= COMPUTE-SANITIZER"',
        '"$@"; rc=$?',
        "me=$tool${GTEST_SHARD_INDEX:-0}",
        '[ "${FAKE_SAN_SLEEP:-}" = "$me" ] && exec sleep 30',
        'if [ "${FAKE_SAN_ERRORS:-}" = "$me" ]; then',
        '  [ "$tool" = memcheck ] && echo "========= ERROR SUMMARY: 3 errors" ||',
        '    echo "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)"',
        "  exit $code",
        "fi",
        '[ "$tool" = memcheck ] && echo "========= ERROR SUMMARY: 0 errors" ||',
        '  echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"',
        "exit $rc",
        ""])
    # The test binary's stand-in: lists two tests unless the filter says Nothing; a run records its shard and
    # whether SOLBENCH_REQUIRE_GPU was set, and passes.
    FAKE_TESTS = "\n".join([
        "#!/bin/bash",
        "filter=",
        'for a in "$@"; do case $a in --gtest_filter=*) filter=${a#--gtest_filter=} ;; esac; done',
        'for a in "$@"; do',
        '  if [ "$a" = --gtest_list_tests ]; then',
        "    case $filter in *Nothing*) ;; *) printf 'RmsNormGpu.\\n  A\\n  B\\n' ;; esac",
        "    exit 0",
        "  fi",
        "done",
        'echo "shard $GTEST_SHARD_INDEX of $GTEST_TOTAL_SHARDS, filter $filter, require ${SOLBENCH_REQUIRE_GPU:-unset}"',
        'echo "[  PASSED  ] 1 tests."',
        ""])

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        d = Path(self.tmp.name)
        (d / "bin").mkdir()
        (d / "bin" / "compute-sanitizer").write_text(self.FAKE_SANITIZER)
        (d / "test_gpu").write_text(self.FAKE_TESTS)
        for f in (d / "bin" / "compute-sanitizer", d / "test_gpu"):
            f.chmod(0o755)
        self.out = d / "out" / "build1"

    def sanitize(self, tools="memcheck,racecheck", filt="*RmsNorm*", binary=None, **settings):
        env = script_env(PATH=f"{self.tmp.name}/bin:{os.environ['PATH']}", **settings)
        return subprocess.run(["bash", str(SCRIPTS / "sanitize.sh"), binary or f"{self.tmp.name}/test_gpu",
                               str(self.out), tools, filt], capture_output=True, text=True, env=env, timeout=60)

    def log(self, tool, k):
        return (self.out.parent / f"build1_{tool}_{k}.log").read_text()

    def test_only_the_shards_named_run(self):
        r = self.sanitize(SHARDS="4", ONLY_SHARDS="1,3")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(sorted(p.name for p in self.out.parent.glob("build1_*.log")),
                         [f"build1_{t}_{k}.log" for t in ("memcheck", "racecheck") for k in (1, 3)])
        self.assertIn("shard 3 of 4", self.log("racecheck", 3))
        for bad in ("4", "1,x", "-1"):
            r = self.sanitize(SHARDS="4", ONLY_SHARDS=bad)
            self.assertEqual(r.returncode, 2, bad)
            self.assertIn("ONLY_SHARDS must list shard indices below SHARDS=4", r.stderr)

    def test_every_shard_of_every_tool_runs_and_passes(self):
        r = self.sanitize(SHARDS="3")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 6, r.stdout)
        for k in range(3):
            self.assertIn(f"build1_memcheck_{k}: ERROR SUMMARY: 0 errors, [  PASSED  ] 1 tests.", lines)
            self.assertIn(f"build1_racecheck_{k}: RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings), "
                          "[  PASSED  ] 1 tests.", lines)
            self.assertIn(f"shard {k} of 3, filter *RmsNorm*, require 1", self.log("memcheck", k))

    def test_racecheck_leaves_out_the_repeated_runs_unless_racecheck_filter_is_set(self):
        # After the filter's own negative patterns if it has some: GoogleTest reads them after its first '-'.
        for filt, settings, racecheck in (
                ("*RmsNorm*", {}, "*RmsNorm*-*.RepeatedRunsAreBitIdentical/*"),
                ("*RmsNorm*-*Special*", {}, "*RmsNorm*-*Special*:*.RepeatedRunsAreBitIdentical/*"),
                ("*RmsNorm*", {"RACECHECK_FILTER": "*Decode*"}, "*Decode*")):
            with self.subTest(filt=filt, **settings):
                r = self.sanitize(filt=filt, SHARDS="1", **settings)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertIn(f"filter {filt}, require", self.log("memcheck", 0))
                self.assertIn(f"filter {racecheck}, require", self.log("racecheck", 0))

    def test_a_shard_with_errors_fails(self):
        for tool, summary in (("memcheck", "ERROR SUMMARY: 3 errors"), ("racecheck", "RACECHECK SUMMARY: 2 hazards")):
            with self.subTest(tool=tool):
                r = self.sanitize(SHARDS="2", FAKE_SAN_ERRORS=f"{tool}1")
                self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                self.assertIn(f"build1_{tool}_1: SANITIZER FAILED (exit 9, {summary}", r.stdout)
                self.assertIn(f"build1_{tool}_0: ", r.stdout)
                self.assertNotIn(f"build1_{tool}_0: SANITIZER FAILED", r.stdout)

    def test_a_shard_cut_by_the_timeout_fails(self):
        r = self.sanitize(tools="racecheck", SHARDS="2", TIMEOUT="1", FAKE_SAN_SLEEP="racecheck0")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("build1_racecheck_0: SANITIZER FAILED (cut at TIMEOUT=1 s before its summary", r.stdout)
        self.assertIn("build1_racecheck_1: RACECHECK SUMMARY: 0 hazards", r.stdout)

    def test_a_filter_naming_no_test_fails_that_tool(self):
        r = self.sanitize(filt="*Nothing*", RACECHECK_FILTER="*RmsNorm*", SHARDS="1")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("build1: the memcheck filter '*Nothing*' names no test of test_gpu; nothing sanitized", r.stdout)
        self.assertIn("build1_racecheck_0: RACECHECK SUMMARY: 0 hazards", r.stdout)

    def test_bad_usage_exits_2_and_says_what(self):
        for args, settings, message in (
                ({"tools": "memcheck,initcheck"}, {}, "TOOLS must list memcheck and/or racecheck"),
                ({"tools": ""}, {}, "TOOLS is empty"),
                ({"filt": ""}, {}, "FILTER is empty"),
                ({"binary": "/nonexistent/test_gpu"}, {}, "is not an executable file"),
                ({}, {"SHARDS": "0"}, "SHARDS must be a positive integer"),
                ({}, {"TIMEOUT": "soon"}, "TIMEOUT must be a whole number of seconds")):
            with self.subTest(args=args, settings=settings):
                r = self.sanitize(**args, **settings)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(message, r.stderr)
        r = subprocess.run(["bash", str(SCRIPTS / "sanitize.sh"), "only-one"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("expected 4 arguments, got 1", r.stderr)


if __name__ == "__main__":
    unittest.main()
