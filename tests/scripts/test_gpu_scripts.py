"""The GPU entry scripts on a machine without a GPU: each says so and exits 3, never a silent pass.
A fake nvidia-smi that fails stands first on PATH, so the result is the same on a GPU machine."""
import json
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def _settings_the_scripts_read() -> set:
    """Every variable a shell script here reads with a default (${NAME:-...}, ${NAME-...}, ${NAME+...}), and the
    SOLBENCH_* protocol variables run_suite.sh records."""
    text = "".join(f.read_text() for f in SCRIPTS.glob("*.sh"))
    return set(re.findall(r"\$\{([A-Z][A-Z0-9_]*):?[-=+]", text)) | set(re.findall(r"\b(SOLBENCH_[A-Z_]+)\b", text))


SETTINGS = _settings_the_scripts_read()


def script_env(**overrides) -> dict:
    """The environment a script under test runs in: this process's, less every setting the scripts read, plus
    `overrides`. A test must not see its caller's settings: run_suite.sh's test stage under SKIP_BENCH=1 (session
    53, c255) passed that to every bench-stage test here, which then ran no bench and failed."""
    return {k: v for k, v in os.environ.items() if k not in SETTINGS} | overrides


class ExperimentPatches(unittest.TestCase):
    def test_every_candidate_patch_still_applies(self):
        patches = sorted((SCRIPTS.parent / "experiments").glob("*.patch"))
        if not patches:
            self.skipTest("no candidate patches in experiments/ now")
        for p in patches:
            with self.subTest(patch=p.name):
                r = subprocess.run(["patch", "--dry-run", "-p1", "-d", str(SCRIPTS.parent), "-i", str(p)],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, f"{p.name} no longer applies:\n{r.stdout}{r.stderr}")


class ScriptEnvironment(unittest.TestCase):
    def test_a_callers_settings_do_not_reach_the_scripts_under_test(self):
        for name in ("SKIP_BENCH", "SKIP_TESTS", "BENCHES", "REPETITIONS", "CONTINUE_RUN", "BENCH_ARGS", "PASSES",
                     "SAME_BINARY", "SANITIZER_FILTER", "SOLBENCH_FLUSH_METHOD", "SOLBENCH_GIT_COMMIT"):
            self.assertIn(name, SETTINGS)
        saved = dict(os.environ)
        try:
            os.environ.update(SKIP_BENCH="1", BENCHES="bench_e2e", SOLBENCH_HOT_TIMING="graph")
            env = script_env(BENCHES="bench_rmsnorm")
        finally:
            os.environ.clear()
            os.environ.update(saved)
        self.assertNotIn("SKIP_BENCH", env)
        self.assertNotIn("SOLBENCH_HOT_TIMING", env)
        self.assertEqual(env["BENCHES"], "bench_rmsnorm")
        self.assertEqual(env["PATH"], os.environ["PATH"])


class WithoutGpu(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        fake = Path(self.tmp.name) / "nvidia-smi"
        fake.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
        fake.chmod(0o755)
        self.env = script_env(PATH=f"{self.tmp.name}:{os.environ['PATH']}")

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args, env=None):
        return subprocess.run(["bash", *map(str, args)], capture_output=True, text=True, env=env or self.env,
                              timeout=60)

    def test_each_entry_script_exits_3_and_says_why(self):
        out = Path(self.tmp.name) / "out"
        for script, args in (("run_suite.sh", []), ("gpu_run.sh", [out]), ("gpu_regress.sh", []),
                             ("gpu_experiments.sh", [out, "SB_DECODE_EXPERIMENT=1"])):
            with self.subTest(script=script):
                r = self.run_script(SCRIPTS / script, *args)
                self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
                self.assertIn("no NVIDIA GPU", r.stderr)

    def test_experiments_with_a_bad_setting_is_a_usage_error(self):
        for var, value, message in (("BENCH", "bench_gemm", "BENCH must be bench_attention or bench_rmsnorm"),
                                    ("PASSES", "two", "PASSES must be a positive integer, got 'two'"),
                                    ("NCU_CACHE", "flush", "NCU_CACHE must be all or none, got 'flush'"),
                                    ("NCU_REPLAY", "range", "NCU_REPLAY must be kernel or application, got 'range'"),
                                    ("SANITIZE", "memcheck,initcheck",
                                     "SANITIZE must list memcheck and/or racecheck, got 'memcheck,initcheck'"),
                                    ("SANITIZE_SHARDS", "0", "SANITIZE_SHARDS must be a positive integer, got '0'"),
                                    ("SANITIZE_TIMEOUT", "5m", "SANITIZE_TIMEOUT must be a positive integer, got '5m'"),
                                    ("DEFAULT_TORCH", "yes", "DEFAULT_TORCH must be AUTO, ON or OFF, got 'yes'")):
            with self.subTest(var=var):
                r = self.run_script(SCRIPTS / "gpu_experiments.sh", Path(self.tmp.name) / "out", "SB_X=1",
                                    env=dict(self.env, **{var: value}))
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(message, r.stderr)

    def test_experiments_without_a_define_is_a_usage_error(self):
        r = self.run_script(SCRIPTS / "gpu_experiments.sh", Path(self.tmp.name) / "out")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("name at least one DEFINE", r.stderr)


class ExperimentFilters(unittest.TestCase):
    """gpu_experiments.sh past the GPU check, with stand-ins for nvidia-smi, cmake and each build's binaries in
    a copy of scripts/: a TEST_FILTER or sanitizer filter that names no test fails loudly instead of passing 0
    tests (session 30's filter '*Harness*' named none of test_gpu's tests and read as a pass)."""

    # cmake's stand-in: each call is logged to cmake_calls; configuring does nothing else; --build DIR writes the
    # build's test_gpu (it lists two tests unless the filter says Nothing) and bench_attention (it leaves a `ran`
    # mark and prints a median for decode_splitk and one for a variant decode_candidate).
    FAKE_CMAKE = "\n".join([
        "#!/bin/bash",
        'echo "$*" >> "$(dirname "$0")/cmake_calls"',
        '[ "$1" = --build ] || exit 0',
        'mkdir -p "$2/tests" "$2/bench"',
        "cat > \"$2/tests/test_gpu\" <<'END'",
        "#!/bin/bash",
        "filter=",
        'for a in "$@"; do case $a in --gtest_filter=*) filter=${a#--gtest_filter=} ;; esac; done',
        'for a in "$@"; do',
        '  if [ "$a" = --gtest_list_tests ]; then',
        "    case $filter in *Nothing*) ;; *) printf 'DecodeSplitk.\\n  Edges\\n  Bits\\n' ;; esac",
        "    exit 0",
        "  fi",
        "done",
        'echo "[  PASSED  ] 2 tests."',
        "END",
        "cat > \"$2/bench/bench_attention\" <<'END'",
        "#!/bin/bash",
        'touch "$(dirname "$0")/ran"',
        'echo "$*" > "$(dirname "$0")/args"',
        'echo "${SOLBENCH_HOT_WINDOW_US:-unset}" >> "$(dirname "$0")/windows"',
        'echo "attention/decode_splitk/bf16/decode/b1_hq32_hkv8_d128_q1_kv4096/cold/manual_time_median 11.0 us"',
        'echo "attention/decode_candidate/bf16/decode/b1_hq32_hkv8_d128_q1_kv4096/cold/manual_time_median 9.9 us"',
        'case "$*" in *decode_control*) echo "attention/decode_control/bf16/decode/b1_hq32_hkv8_d128_q1_kv4096/cold/manual_time_median 11.55 us";; esac',
        "END",
        'chmod +x "$2/tests/test_gpu" "$2/bench/bench_attention"',
        ""])

    def run_experiments(self, defines=("SB_DECODE_EXPERIMENT=1",), **settings):
        import shutil
        with tempfile.TemporaryDirectory() as tmp:
            root, tools = Path(tmp) / "repo", Path(tmp) / "bin"
            (root / "scripts").mkdir(parents=True)
            tools.mkdir()
            for name in ("gpu_experiments.sh", "experiment_summary.py", "sanitize.sh"):
                shutil.copy(SCRIPTS / name, root / "scripts" / name)
            (tools / "nvidia-smi").write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H200'\n")
            (tools / "cmake").write_text(self.FAKE_CMAKE)
            for f in tools.iterdir():
                f.chmod(0o755)
            env = script_env(PATH=f"{tools}:{os.environ['PATH']}", **{"PASSES": "1", **settings})
            r = subprocess.run(["bash", str(root / "scripts" / "gpu_experiments.sh"), str(Path(tmp) / "out"),
                                *defines], capture_output=True, text=True, env=env, timeout=60)
            benched = sorted(p.parent.parent.name for p in (root / "build").glob("exp_*/bench/ran"))
            self.bench_args = {p.parent.parent.name: p.read_text().split()
                               for p in (root / "build").glob("exp_*/bench/args")}
            self.windows = {p.parent.parent.name: p.read_text().split()
                            for p in (root / "build").glob("exp_*/bench/windows")}
            self.cmake_calls = (tools / "cmake_calls").read_text().splitlines()
            summary = Path(tmp) / "out" / "summary.txt"
            self.summary = summary.read_text() if summary.exists() else ""
            timings = Path(tmp) / "out" / "timings.txt"
            self.timings = timings.read_text().splitlines() if timings.exists() else []
            return r, benched

    def torch_setting(self, build):  # the SOLBENCH_WITH_TORCH a build was configured with
        for call in self.cmake_calls:
            if call.startswith("-S ") and f"/build/exp_{build} " in call:
                return [a for a in call.split() if a.startswith("-DSOLBENCH_WITH_TORCH=")]
        self.fail(f"exp_{build} was not configured: {self.cmake_calls}")

    def test_the_default_build_links_libtorch_only_where_the_filter_names_a_pytorch_baseline(self):
        # The binaries of an A/B differ in the switch alone unless a PyTorch row is asked for.
        for settings, default in (({}, "AUTO"),  # bench_attention's default filter names the SDPA backends
                                  ({"BENCH_FILTER": "^attention/decode_splitk/"}, "OFF"),
                                  ({"BENCH_FILTER": "^attention/decode_splitk/", "DEFAULT_TORCH": "ON"}, "ON")):
            with self.subTest(**settings):
                r, _ = self.run_experiments(**settings)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertEqual(self.torch_setting("default"), [f"-DSOLBENCH_WITH_TORCH={default}"])
                self.assertEqual(self.torch_setting("SB_DECODE_EXPERIMENT_1"), ["-DSOLBENCH_WITH_TORCH=OFF"])

    def test_bench_args_reach_every_builds_bench_run(self):
        r, benched = self.run_experiments(BENCH_ARGS="--split-sweep=all --benchmark_min_warmup_time=0")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(benched, ["exp_SB_DECODE_EXPERIMENT_1", "exp_default"])
        for build, args in self.bench_args.items():
            self.assertIn("--split-sweep=all", args, build)
            self.assertIn("--benchmark_min_warmup_time=0", args, build)
        r, _ = self.run_experiments()  # none set: nothing added
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for build, args in self.bench_args.items():
            self.assertFalse([a for a in args if a.startswith("--split-sweep")], build)

    def test_an_environment_variant_runs_the_default_binary_with_its_setting(self):
        # A timing-protocol experiment (session 60: SOLBENCH_HOT_WINDOW_US) measured as a build of its own: no
        # configure, the default's binary run with the setting, its cases read as build env_<NAME>_<VALUE>.
        r, benched = self.run_experiments(defines=("env:SOLBENCH_HOT_WINDOW_US=500",), PASSES="2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(benched, ["exp_default"])
        self.assertFalse([c for c in self.cmake_calls if "exp_env" in c], self.cmake_calls)
        self.assertIn("env_SOLBENCH_HOT_WINDOW_US_500: the default build's binaries with SOLBENCH_HOT_WINDOW_US=500",
                      r.stdout)
        # Pass 1: default, then the variant; pass 2 reversed.
        self.assertEqual(self.windows, {"exp_default": ["unset", "500", "500", "unset"]})
        builds = [line.split()[:2] for line in self.timings if "decode_splitk" in line]
        self.assertEqual(builds, [["1", "default"], ["1", "env_SOLBENCH_HOT_WINDOW_US_500"],
                                  ["2", "env_SOLBENCH_HOT_WINDOW_US_500"], ["2", "default"]])
        self.assertIn("env_SOLBENCH_HOT_WINDOW_US_500", self.summary)
        # Beside a DEFINE build, and as the CONTROL.
        r, benched = self.run_experiments(defines=("SB_DECODE_EXPERIMENT=1", "env:SOLBENCH_HOT_WINDOW_US=200"),
                                          CONTROL="env_SOLBENCH_HOT_WINDOW_US_200")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(benched, ["exp_SB_DECODE_EXPERIMENT_1", "exp_default"])
        self.assertEqual(self.windows["exp_default"], ["unset", "200"])

    def test_a_malformed_environment_variant_is_a_usage_error(self):
        for define in ("env:FOO=1", "env:SOLBENCH_HOT_WINDOW_US=", "env:SOLBENCH_HOT_WINDOW_US=5 0",
                       "env:solbench_x=1", "env:SOLBENCH_X=$(id)"):
            with self.subTest(define=define):
                r = subprocess.run(["bash", str(SCRIPTS / "gpu_experiments.sh"), "/nonexistent/out", define],
                                   capture_output=True, text=True, env=script_env(), timeout=30)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn("env:SOLBENCH_NAME=VALUE", r.stderr)

    def test_same_binary_compares_two_variants_of_one_process(self):
        # One build; the candidate's cases read as build CANDIDATE under the baseline's names, so each pass's
        # ratio is candidate / baseline from the same process.
        r, benched = self.run_experiments(defines=(), SAME_BINARY="decode_candidate:decode_splitk")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(benched, ["exp_default"])
        case = "attention/decode_splitk/bf16/decode/b1_hq32_hkv8_d128_q1_kv4096/cold"
        self.assertEqual(self.timings, [f"1 default {case} 11.0", f"1 decode_candidate {case} 9.9"])
        self.assertRegex(self.summary, rf"{case}\s+decode_candidate\s+9\.90\s+x0\.900")
        self.assertEqual(self.torch_setting("default"), ["-DSOLBENCH_WITH_TORCH=OFF"])

    def test_same_binary_reads_each_of_several_candidates_as_a_build_of_its_own(self):
        # SAME_BINARY=CANDIDATE,CONTROL:BASELINE: a control (the baseline's code under another name) gives the
        # A/A ratio of the same process beside the candidate's.
        r, benched = self.run_experiments(defines=(), SAME_BINARY="decode_candidate,decode_control:decode_splitk")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(benched, ["exp_default"])
        case = "attention/decode_splitk/bf16/decode/b1_hq32_hkv8_d128_q1_kv4096/cold"
        self.assertEqual(self.timings, [f"1 default {case} 11.0", f"1 decode_candidate {case} 9.9",
                                        f"1 decode_control {case} 11.55"])
        self.assertRegex(self.summary, rf"{case}\s+decode_candidate\s+9\.90\s+x0\.900")
        self.assertRegex(self.summary, rf"{case}\s+decode_control\s+11\.55\s+x1\.050")

    def test_control_passes_to_the_summary_and_a_control_naming_no_build_is_a_usage_error(self):
        r, _ = self.run_experiments(defines=(), SAME_BINARY="decode_candidate,decode_control:decode_splitk",
                                    CONTROL="decode_control")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        case = "attention/decode_splitk/bf16/decode/b1_hq32_hkv8_d128_q1_kv4096/cold"
        # One pass here (PASSES=1): the summary says it gives no verdict against the control.
        self.assertRegex(self.summary, rf"{case}\s+decode_candidate\s+9\.90\s+x0\.900 \(1 pass\)\s+\(under 3 passes")
        r, _ = self.run_experiments(CONTROL="SB_DECODE_EXPERIMENT_1")  # a DEFINE build, named as in the files
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for defines, same, control in (((), "decode_candidate,decode_control:decode_splitk", "decode_splitk"),
                                       ((), "decode_candidate:decode_splitk", "decode_control"),
                                       (("SB_DECODE_EXPERIMENT=1",), "", "SB_DECODE_EXPERIMENT=1")):
            with self.subTest(control=control):
                env = script_env(CONTROL=control)
                if same:
                    env["SAME_BINARY"] = same
                r = subprocess.run(["bash", str(SCRIPTS / "gpu_experiments.sh"), "/nonexistent/out", *defines],
                                   capture_output=True, text=True, env=env, timeout=60)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(f"CONTROL '{control}' names none of this command's builds", r.stderr)

    def test_same_binary_with_a_define_or_a_bad_pair_is_a_usage_error(self):
        for defines, pair, message in (
                (["SB_DECODE_EXPERIMENT=1"], "decode_candidate:decode_splitk", "name no DEFINE"),
                ([], "decode_splitk:decode_splitk", "distinct variant names"),
                ([], "decode_candidate,decode_splitk:decode_splitk", "distinct variant names"),
                ([], "decode_candidate,decode_candidate:decode_splitk", "distinct variant names"),
                ([], "decode_candidate,:decode_splitk", "SAME_BINARY must be CANDIDATE[,CANDIDATE...]:BASELINE"),
                ([], "decode_candidate", "SAME_BINARY must be CANDIDATE[,CANDIDATE...]:BASELINE")):
            with self.subTest(pair=pair, defines=defines):
                r = subprocess.run(["bash", str(SCRIPTS / "gpu_experiments.sh"), "/nonexistent/out", *defines],
                                   capture_output=True, text=True, env=script_env(SAME_BINARY=pair), timeout=60)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(message, r.stderr)

    def test_a_test_filter_naming_no_test_fails_and_nothing_is_benchmarked(self):
        r, benched = self.run_experiments(TEST_FILTER="*Nothing*")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        for build in ("default", "SB_DECODE_EXPERIMENT_1"):
            self.assertIn(f"{build}: TEST_FILTER '*Nothing*' names no test of test_gpu; not benchmarked", r.stdout)
        self.assertEqual(benched, [])

    def test_a_sanitizer_filter_naming_no_test_fails(self):
        r, benched = self.run_experiments(SANITIZE="memcheck", SANITIZE_FILTER="*Nothing*")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(benched, ["exp_SB_DECODE_EXPERIMENT_1", "exp_default"])
        self.assertIn("SB_DECODE_EXPERIMENT_1: the memcheck filter '*Nothing*' names no test of test_gpu; "
                      "nothing sanitized", r.stdout)


class RunSuiteFiling(unittest.TestCase):
    """run_suite.sh past the GPU check, with stand-ins for nvidia-smi, gpu_run.sh and report.py in a copy of
    scripts/: it files the run as results/<gpu>/<date>_<commit>.json and latest.json, and generates the
    report from the repository root with the relative path `results/<gpu>`, the command REPORT.md records
    and tests/test_committed_results.py regenerates it with; with SKIP_BENCH it files nothing."""

    def run_suite(self, gpu_run=None, earlier=False, filed=None, **settings):
        import json
        import shutil
        import sys
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import gbfake
        tmp_dir = tempfile.TemporaryDirectory()
        self.addCleanup(tmp_dir.cleanup)
        tmp = tmp_dir.name
        root, tools = Path(tmp) / "repo", Path(tmp) / "bin"
        (root / "scripts").mkdir(parents=True)
        tools.mkdir()
        for name in ("run_suite.sh", "sbresults.py"):
            shutil.copy(SCRIPTS / name, root / "scripts" / name)
        (tools / "nvidia-smi").write_text("#!/bin/sh\necho 'NVIDIA H200'\n")
        run = gbfake.run([gbfake.floor("cold"), gbfake.rmsnorm("vectorized", "bf16", 4096, 4096, "cold")])
        (root / "run.json").write_text(json.dumps(run))
        (root / "scripts" / "gpu_run.sh").write_text(gpu_run or
                                                     '#!/bin/sh\n: > "$1/bench.log"\ncp "$(dirname "$0")/../run.json" "$1/bench_rmsnorm.json"\n')
        if earlier:  # an earlier call's JSON in logs/
            (root / "results" / "h200" / "logs").mkdir(parents=True)
            (root / "results" / "h200" / "logs" / "bench_rmsnorm.json").write_text(json.dumps(run))
        for name, text in (filed or {}).items():  # files results/h200 holds from an earlier run
            (root / "results" / "h200").mkdir(parents=True, exist_ok=True)
            (root / "results" / "h200" / name).write_text(text)
        (root / "scripts" / "report.py").write_text(
            "import os, sys\nopen(os.path.join(os.path.dirname(__file__), 'report_call.txt'), 'w')"
            ".write(os.getcwd() + '\\n' + ' '.join(sys.argv[1:]))\n")
        for f in (tools / "nvidia-smi", root / "scripts" / "gpu_run.sh"):
            f.chmod(0o755)
        env = script_env(PATH=f"{tools}:{os.environ['PATH']}", SOLBENCH_GIT_COMMIT="0123456789abcdef", **settings)
        r = subprocess.run(["bash", str(root / "scripts" / "run_suite.sh")], capture_output=True, text=True,
                           env=env, timeout=60)
        self.root = root
        return r, root / "results" / "h200"

    def test_the_report_is_generated_with_the_relative_results_path(self):
        r, dest = self.run_suite()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue((dest / "latest.json").is_file())
        self.assertEqual(len(list(dest.glob("*_0123456789ab.json"))), 1)
        cwd, args = (self.root / "scripts" / "report_call.txt").read_text().split("\n")
        self.assertEqual(Path(cwd).resolve(), self.root.resolve())
        self.assertEqual(args, "results/h200")

    def test_the_layer_timeline_is_filed_with_its_run_and_a_stale_one_removed(self):
        with_timeline = ('#!/bin/sh\n: > "$1/bench.log"\ncp "$(dirname "$0")/../run.json" "$1/bench_rmsnorm.json"\n'
                         'echo \'{"shapes": {}}\' > "$1/layer_timeline.json"\n')
        r, dest = self.run_suite(gpu_run=with_timeline)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual((dest / "layer_timeline_latest.json").read_text(), '{"shapes": {}}\n')
        r, dest = self.run_suite(filed={"layer_timeline_latest.json": "an earlier run's"})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertFalse((dest / "layer_timeline_latest.json").exists())

    def test_a_call_that_stops_before_its_benchmarks_files_nothing(self):
        # Session 63: a CONTINUE_RUN part refused before its build (gpu_run.sh exits 2) left run_suite.sh to merge
        # and file whatever logs/ held from earlier calls (on another GPU's machine, the earlier parts) as a run.
        for code in (2, 1):
            with self.subTest(status=code):
                r, dest = self.run_suite(gpu_run=f"#!/bin/sh\necho 'gpu_run.sh: refused' >&2\nexit {code}\n", earlier=True)
                self.assertEqual(r.returncode, code, r.stdout + r.stderr)
                self.assertIn(f"gpu_run.sh stopped (status {code}) before its benchmarks: no results filed", r.stderr)
                self.assertFalse((dest / "latest.json").exists())
                self.assertEqual(list(dest.glob("*_0123456789ab.json")), [])

    def test_with_skip_bench_nothing_is_filed(self):
        # The logs folder keeps an earlier run's JSON; a call that runs no benchmark must not file it as a new run.
        r, dest = self.run_suite(SKIP_BENCH="1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("SKIP_BENCH: no benchmarks run, so no results filed", r.stderr)
        self.assertFalse((dest / "latest.json").exists())


class GpuRunBenchStage(unittest.TestCase):
    """gpu_run.sh's bench stage with stand-ins for nvidia-smi, cmake and the two bench binaries (BUILD_DIR):
    a binary none of whose cases BENCH_ARGS' filter names leaves an empty --benchmark_out file and exits 0;
    the stage drops that file and says so (session 20: the empty file failed the merge and the cross-check of
    a prefill-only run), while a binary that fails still fails the run."""

    def run_stage(self, rmsnorm_body, before=None, test_gpu=None, tools_extra=None, e2e_body=None, **settings):
        with tempfile.TemporaryDirectory() as tmp:
            tools, build, out = Path(tmp) / "bin", Path(tmp) / "build", Path(tmp) / "out"
            (build / "bench").mkdir(parents=True)
            tools.mkdir()
            if test_gpu is not None:
                (build / "tests").mkdir()
                (build / "tests" / "test_gpu").write_text("#!/bin/bash\n" + test_gpu)
                (build / "tests" / "test_gpu").chmod(0o755)
            (tools / "nvidia-smi").write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H200'\n")
            (tools / "cmake").write_text("#!/bin/sh\nexit 0\n")
            for name, text in (tools_extra or {}).items():
                (tools / name).write_text(text)
            writes_out = 'for a in "$@"; do case $a in --benchmark_out=*) f=${a#--benchmark_out=} ;; esac; done\n'
            (build / "bench" / "bench_rmsnorm").write_text("#!/bin/bash\n" + writes_out + rmsnorm_body)
            (build / "bench" / "bench_attention").write_text(  # its flags in the context, for the tests to read
                "#!/bin/bash\n" + writes_out + 'echo "{\\"context\\": {\\"args\\": \\"$*\\"}, \\"benchmarks\\": []}" > "$f"\n')
            if e2e_body is not None:
                (build / "bench" / "bench_e2e").write_text("#!/bin/bash\n" + writes_out + e2e_body)
            for f in list(tools.iterdir()) + list((build / "bench").iterdir()):
                f.chmod(0o755)
            env = script_env(PATH=f"{tools}:{os.environ['PATH']}", BUILD_DIR=str(build), SKIP_TESTS="1",
                       SKIP_CROSSCHECK="1", SKIP_SANITIZER="1", BENCH_ARGS="--benchmark_filter=^attention/")
            env.update(settings)
            if before:
                out.mkdir()
                for name, text in before.items():
                    (out / name).write_text(text)
            r = subprocess.run(["bash", str(SCRIPTS / "gpu_run.sh"), str(out)], capture_output=True, text=True,
                               env=env, timeout=60)
            self.crosscheck_left = (out / "crosscheck.json").exists()
            self.timeline_left = (out / "layer_timeline.json").exists()
            self.sanitizer_logs = {p.name: p.read_text() for p in sorted(out.glob("sanitizer_*.log"))}
            return r, {p.name: p.read_text() for p in sorted(out.glob("bench_*.json"))}

    def test_a_binary_whose_cases_the_filter_leaves_out_adds_no_json(self):
        r, jsons = self.run_stage('echo "Failed to match any benchmarks against regex: ^attention/" >&2\n: > "$f"\n')
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(list(jsons), ["bench_attention.json"])
        self.assertIn("bench_rmsnorm: BENCH_ARGS' filter names none of its cases; no JSON from it", r.stderr)

    def test_continue_run_keeps_the_json_of_a_binary_benches_leaves_out(self):
        r, jsons = self.run_stage("exit 1\n", before={"bench_rmsnorm.json": "part one\n"},
                                  BENCHES="bench_attention", BENCH_ARGS="", CONTINUE_RUN="1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(jsons["bench_rmsnorm.json"], "part one\n")
        self.assertIn("bench_attention.json", jsons)
        self.assertIn("bench_rmsnorm: not in BENCHES; CONTINUE_RUN keeps bench_rmsnorm.json from an earlier call",
                      r.stderr)

    def test_continue_run_that_finds_no_earlier_part_fails_before_the_benchmarks(self):
        # Sessions 59 and 63: a part sent to a fresh machine ran its ~430 s alone (session 59 with a warning), and
        # what was left of the budget no longer held the whole run again. Nothing to continue is an error, at once.
        r, jsons = self.run_stage("exit 1\n", BENCHES="bench_attention_decode", BENCH_ARGS="", CONTINUE_RUN="1")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("CONTINUE_RUN=1, but", r.stderr)
        self.assertIn("holds no earlier part's JSON", r.stderr)
        self.assertNotIn("configure + build", r.stderr)
        self.assertEqual(jsons, {})
        # Only an earlier part of another binary counts: the set this call measures is not one.
        r, jsons = self.run_stage("exit 1\n", before={"bench_attention_decode.json": "an old decode set\n"},
                                  BENCHES="bench_attention_decode", BENCH_ARGS="", CONTINUE_RUN="1")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("holds no earlier part's JSON", r.stderr)
        # Without CONTINUE_RUN the same set is a run of its own.
        r, jsons = self.run_stage("exit 1\n", BENCHES="bench_attention_decode", BENCH_ARGS="")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(list(jsons), ["bench_attention_decode.json"])
        # With an earlier part, the part runs.
        r, jsons = self.run_stage("exit 1\n", before={"bench_rmsnorm.json": "part one\n"},
                                  BENCHES="bench_attention_decode", BENCH_ARGS="", CONTINUE_RUN="1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(sorted(jsons), ["bench_attention_decode.json", "bench_rmsnorm.json"])

    def test_continue_run_on_another_gpu_fails_before_the_benchmarks(self):
        # Session 62: parts 1 and 2 on one H200, part 3 sent to a fresh machine holding another; the merge refuses
        # such parts, so the part must fail at once, not after its build and benchmarks.
        smi = {"nvidia-smi": "#!/bin/sh\ncase \"$*\" in *--query-gpu=uuid*) echo GPU-bbbb ;; *) echo 'GPU 0: NVIDIA H200' ;; esac\n"}
        earlier = {"bench_rmsnorm.json": '{"context": {"gpu_uuid": "GPU-aaaa"}, "benchmarks": []}\n'}
        r, jsons = self.run_stage("exit 1\n", before=earlier, tools_extra=smi,
                                  BENCHES="bench_attention", BENCH_ARGS="", CONTINUE_RUN="1")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("bench_rmsnorm.json (an earlier part) was measured on GPU-aaaa and this machine has GPU-bbbb",
                      r.stderr)
        self.assertEqual(list(jsons), ["bench_rmsnorm.json"])  # bench_attention never ran
        # The same GPU continues the run.
        earlier = {"bench_rmsnorm.json": '{"context": {"gpu_uuid": "GPU-bbbb"}, "benchmarks": []}\n'}
        r, jsons = self.run_stage("exit 1\n", before=earlier, tools_extra=smi,
                                  BENCHES="bench_attention", BENCH_ARGS="", CONTINUE_RUN="1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(sorted(jsons), ["bench_attention.json", "bench_rmsnorm.json"])

    def test_without_continue_run_an_earlier_calls_json_is_not_merged(self):
        # A one-binary run must not file another binary's results from an earlier run (of another commit, say),
        # nor a cross-check that is not of this call's JSON.
        r, jsons = self.run_stage("exit 1\n", before={"bench_rmsnorm.json": "an old run\n",
                                                      "crosscheck.json": "an old cross-check\n"},
                                  BENCHES="bench_attention", BENCH_ARGS="")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(list(jsons), ["bench_attention.json"])
        self.assertIn("bench_rmsnorm: not in BENCHES; its JSON from an earlier call removed", r.stderr)
        self.assertFalse(self.crosscheck_left, "a stale crosscheck.json survived the bench stage")

    def test_benches_naming_another_binary_is_a_usage_error(self):
        for value, message in (("bench_gemm",
                                "BENCHES names bench_rmsnorm, bench_attention (or bench_attention_decode, "
                                "bench_attention_prefill) and/or bench_e2e, got 'bench_gemm'"),
                               ("bench_attention bench_attention_decode",
                                "BENCHES names bench_attention and a part of it"),
                               (" ", "BENCHES is empty")):
            with self.subTest(value=value):
                r, jsons = self.run_stage("exit 1\n", BENCHES=value)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(message, r.stderr)
                self.assertEqual(jsons, {})

    def test_bench_attention_in_two_parts(self):
        # Protocol v58's interleaved repetitions make bench_attention too long for one device command: its decode
        # and prefill sets run as two calls, each its own JSON, the second keeping the first's (CONTINUE_RUN).
        r, jsons = self.run_stage("exit 1\n", BENCHES="bench_attention_decode", BENCH_ARGS="")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(list(jsons), ["bench_attention_decode.json"])
        args = json.loads(jsons["bench_attention_decode.json"])["context"]["args"]
        self.assertIn("--shapes=decode --dtypes=fp32,fp16,bf16", args)
        self.assertTrue(args.endswith("/bench_attention_decode.json --benchmark_out_format=json"), args)
        r, jsons = self.run_stage("exit 1\n", before={"bench_attention_decode.json": "part one\n"},
                                  BENCHES="bench_attention_prefill", BENCH_ARGS="", CONTINUE_RUN="1",
                                  ATTENTION_DTYPES="bf16")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(jsons["bench_attention_decode.json"], "part one\n")
        self.assertIn("--shapes=prefill --dtypes=bf16", json.loads(jsons["bench_attention_prefill.json"])["context"]["args"])
        r, jsons = self.run_stage("exit 1\n", BENCHES="bench_attention_prefill", ATTENTION_SHAPES="anchors")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("ATTENTION_SHAPES narrows bench_attention, not its parts", r.stderr)
        self.assertEqual(jsons, {})

    def test_a_sanitizer_filter_naming_no_test_fails(self):
        # test_gpu lists no test for the filter; compute-sanitizer (absent here) is never called.
        r, _ = self.run_stage('echo \'{"context": {}, "benchmarks": []}\' > "$f"\n', test_gpu="exit 0\n",
                              SKIP_SANITIZER="", SANITIZER_FILTER="*Nothing*")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        for tool, filt in (("memcheck", "*Nothing*"), ("racecheck", "*Nothing*-*.RepeatedRunsAreBitIdentical/*")):
            self.assertIn(f"sanitizer: the {tool} filter '{filt}' names no test of test_gpu; nothing sanitized",
                          r.stderr)
        self.assertIn("FAILED: compute-sanitizer (sanitizer.log)", r.stderr)

    def test_the_sanitizer_stage_runs_each_tool_in_shards(self):
        # Both tools, SANITIZER_SHARDS processes each, one line a process in sanitizer.log (shown on stderr);
        # a shard with errors fails the run.
        listing = ('for a in "$@"; do [ "$a" = --gtest_list_tests ] && { printf \'RmsNormGpu.\\n  A\\n  B\\n\'; exit 0; }; '
                   'done\necho "[  PASSED  ] 1 tests."\n')
        fake = {"compute-sanitizer": SanitizeShards.FAKE_SANITIZER}
        r, _ = self.run_stage('echo \'{"context": {}, "benchmarks": []}\' > "$f"\n', test_gpu=listing,
                              tools_extra=fake, SKIP_SANITIZER="", SANITIZER_SHARDS="2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for name in ("sanitizer_memcheck_0", "sanitizer_memcheck_1", "sanitizer_racecheck_0", "sanitizer_racecheck_1"):
            self.assertRegex(r.stderr, name + r": (ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)")
        r, _ = self.run_stage('echo \'{"context": {}, "benchmarks": []}\' > "$f"\n', test_gpu=listing,
                              tools_extra=fake, SKIP_SANITIZER="", SANITIZER_SHARDS="2", FAKE_SAN_ERRORS="racecheck1")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("sanitizer_racecheck_1: SANITIZER FAILED (exit 9, RACECHECK SUMMARY: 2 hazards", r.stderr)
        self.assertIn("FAILED: compute-sanitizer (sanitizer.log)", r.stderr)

    def test_the_stage_sanitizes_every_test_and_passes_the_racecheck_filter_on(self):
        # The stage's defaults: memcheck over every test, racecheck the same less the parameterized RepeatedRunsAreBitIdentical
        # (sanitize.sh's rule, tested in SanitizeShards); SANITIZER_RACECHECK_FILTER reaches sanitize.sh.
        listing = ('for a in "$@"; do case $a in --gtest_filter=*) f=${a#--gtest_filter=} ;; '
                   '--gtest_list_tests) printf \'RmsNormGpu.\\n  A\\n\'; exit 0 ;; esac; done\n'
                   'echo "filter $f"; echo "[  PASSED  ] 1 tests."\n')
        fake = {"compute-sanitizer": SanitizeShards.FAKE_SANITIZER}
        body = 'echo \'{"context": {}, "benchmarks": []}\' > "$f"\n'
        for settings, memcheck, racecheck in (
                ({}, "*", "*-*.RepeatedRunsAreBitIdentical/*"),
                ({"SANITIZER_RACECHECK_FILTER": "*Decode*"}, "*", "*Decode*")):
            with self.subTest(**settings):
                r, _ = self.run_stage(body, test_gpu=listing, tools_extra=fake, SKIP_SANITIZER="",
                                      SANITIZER_SHARDS="1", **settings)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertIn(f"filter {memcheck}\n", self.sanitizer_logs["sanitizer_memcheck_0.log"])
                self.assertIn(f"filter {racecheck}\n", self.sanitizer_logs["sanitizer_racecheck_0.log"])

    def test_a_bad_sanitizer_setting_fails_before_the_benchmarks(self):
        for var, value in (("SANITIZER_SHARDS", "0"), ("SANITIZER_SHARDS", "four"), ("SANITIZER_TIMEOUT", "-1")):
            with self.subTest(var=var, value=value):
                r, jsons = self.run_stage("exit 1\n", **{var: value})
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(f"gpu_run.sh: {var} must be", r.stderr)
                self.assertEqual(jsons, {})

    def test_bench_e2e_without_libtorch(self):
        # The stand-in build has no bench_e2e (a build without libtorch): the default BENCHES says so and goes
        # on; BENCHES naming it fails the run.
        r, jsons = self.run_stage('echo \'{"context": {}, "benchmarks": []}\' > "$f"\n', BENCH_ARGS="")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("bench_e2e: not built (it needs libtorch", r.stderr)
        self.assertEqual(list(jsons), ["bench_attention.json", "bench_rmsnorm.json"])
        r, jsons = self.run_stage("exit 1\n", BENCHES="bench_e2e", BENCH_ARGS="")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("FAILED: bench_e2e", r.stderr)

    def test_the_layer_timeline_follows_bench_e2e_over_its_bf16_decode_layers(self):
        # The stand-in build has no probe library, so the stage runs layer_timeline.py, which refuses with the
        # reason: the stage fails the run and leaves no timeline, not an earlier call's.
        decode = ('echo \'{"context": {}, "benchmarks": [{"name": '
                  '"e2e/solbench/bf16/decode/h256_hq4_hkv2_d64_f512_b2_q1_kv33/cold"}]}\' > "$f"\n')
        stale = {"layer_timeline.json": "{}", "bench_rmsnorm.json": "x"}
        r, _ = self.run_stage("exit 1\n", e2e_body=decode, before=stale, BENCHES="bench_e2e", BENCH_ARGS="")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("layer timeline", r.stderr)
        self.assertIn("FAILED: layer timeline (bench.log)", r.stderr)
        self.assertFalse(self.timeline_left)
        # SKIP_TIMELINE, or no bf16 decode layer in the run: no stage, and the call passes.
        r, _ = self.run_stage("exit 1\n", e2e_body=decode, before=stale, BENCHES="bench_e2e", BENCH_ARGS="",
                              SKIP_TIMELINE="1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn("layer timeline", r.stderr)
        self.assertFalse(self.timeline_left)
        prefill = decode.replace("decode/h256_hq4_hkv2_d64_f512_b2_q1_kv33", "prefill/h256_hq4_hkv2_d64_f512_b1_q17_kv17")
        r, _ = self.run_stage("exit 1\n", e2e_body=prefill, BENCHES="bench_e2e", BENCH_ARGS="")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn("layer timeline", r.stderr)
        # A later part of the run (CONTINUE_RUN, bench_e2e left out) keeps the timeline of the part that made it.
        r, _ = self.run_stage('echo \'{"context": {}, "benchmarks": []}\' > "$f"\n',
                              before={"layer_timeline.json": "{}", "bench_e2e.json": "part one\n"},
                              BENCHES="bench_rmsnorm", BENCH_ARGS="", CONTINUE_RUN="1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(self.timeline_left)

    def test_a_failing_binary_still_fails_the_run(self):
        r, _ = self.run_stage(': > "$f"\nexit 1\n')
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("FAILED: bench_rmsnorm", r.stderr)



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
