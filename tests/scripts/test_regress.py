"""regress.py through its command line: verdicts, listing, the summary and exit codes."""
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
DATA = Path(__file__).resolve().parent / "data"
sys.path.insert(0, str(SCRIPTS))
import gbfake  # noqa: E402
import regress  # noqa: E402

CASES = gbfake.rmsnorm_grid() + gbfake.rmsnorm_grid(mode="hot") + gbfake.attention_set() + \
    [gbfake.floor("cold"), gbfake.floor("hot")]
PLANTED = "rmsnorm/vectorized/bf16/t4096_h4096/cold"
# The repetitions, (us, SM MHz after it), of cuDNN prefill b1_hq16_hkv16_d128_q16384_kv16384/cold in
# two back-to-back H200 runs of one build, following the clock, put on a case of CASES.
# 1.4826 x MAD called it REGRESSED (+10.5%).
CUDNN = "attention/torch_sdpa_cudnn/bf16/prefill/b1_hq32_hkv8_d128_q4096_kv4096_causal/cold"
CUDNN_RUN1 = [(3228.9, 1868.0), (3233.7, 1860.0), (3452.8, 1634.0)]
CUDNN_RUN2 = [(3237.9, 1815.0), (3574.3, 1649.0), (3598.9, 1650.0)]


def edit_rows(path, edit):
    """Apply edit(row) to every row of a Google Benchmark JSON file; rows it returns False for are
    dropped."""
    doc = json.loads(Path(path).read_text())
    doc["benchmarks"] = [row for row in doc["benchmarks"] if edit(row) is not False]
    Path(path).write_text(json.dumps(doc))
    return path


def set_repetitions(path, name, reps):
    """Replace the repetitions of one case by [(us, sm_mhz), ...] (its aggregates are dropped)."""
    it = iter(reps)

    def edit(row):
        if row["run_name"] != name + "/manual_time":
            return True
        if row["run_type"] != "iteration":
            return False
        row["real_time"], row["sm_mhz"] = next(it)
        return True
    return edit_rows(path, edit)


class Regress(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="sbregress_"))
        self.addCleanup(shutil.rmtree, self.tmp)
        self.n = 0

    def json(self, cases=CASES, **kwargs):
        self.n += 1
        return gbfake.write(self.tmp / f"run{self.n}.json", gbfake.run(cases, **kwargs))

    def regress(self, *args, table=True):
        """regress.py's exit status, stdout and stderr; with the per-case table unless table=False."""
        out = subprocess.run([sys.executable, str(SCRIPTS / "regress.py"), *map(str, args),
                              *(["--table"] if table else [])], capture_output=True, text=True)
        return out.returncode, out.stdout, out.stderr

    def verdicts(self, stdout):
        return {line.split()[0]: line.split()[-1] for line in stdout.splitlines()
                if line.split() and line.split()[0] in {c["name"] for c in CASES}}

    def test_planted_10pct_slowdown_is_caught_among_noisy_cases(self):
        """The planted case has 1 % noise, the others 1-2 % (and gbfake's occasional +8 % clock
        dip). Power of the rule on gbfake's model, 5 repetitions, noise-k 3, 2000 seed pairs: a 10 %
        slowdown is caught 76 % of the time at 1 % noise, 64 % at 2 % (range / d2 counts a dip in
        either run as spread; 1.4826 x MAD, which ignored it, caught 99 % and 78 %)."""
        for seed in range(5):
            base = self.json(seed=100 + seed, sigma={PLANTED: 0.01})
            run = self.json(seed=200 + seed, sigma={PLANTED: 0.01}, scale={PLANTED: 1.10})
            rc, out, _ = self.regress(base, run)
            self.assertEqual(rc, 1, out)
            verdicts = self.verdicts(out)
            self.assertEqual(verdicts[PLANTED], "REGRESSED", out)
            self.assertEqual([n for n, v in verdicts.items() if v == "REGRESSED"], [PLANTED])
            self.assertIn(f"REGRESSED: {PLANTED}", out)
            self.assertTrue(out.rstrip().endswith("FAIL"))

    def test_sm_clock_is_shown_beside_a_regression_and_a_clock_change_warned(self):
        def clocked(path, mhz):
            return edit_rows(path, lambda row: row.update(sm_mhz=mhz))
        base = clocked(self.json(seed=1, sigma={PLANTED: 0.01}), 1980.0)
        run = clocked(self.json(seed=2, sigma={PLANTED: 0.01}, scale={PLANTED: 1.2}), 1755.0)
        rc, out, _ = self.regress(base, run)
        self.assertEqual(rc, 1, out)  # the clock never excuses a slowdown
        self.assertIn(f"REGRESSED: {PLANTED}", out)
        self.assertIn("SM clock after the case 1980 -> 1755 MHz", out)
        self.assertIn("WARNING: different SM clocks after the cases (median sm_mhz): baseline 1980 MHz, "
                      "run 1755 MHz", out)
        rc, out, _ = self.regress(base, clocked(self.json(seed=3), 1975.0))
        self.assertNotIn("SM clocks", out)

    def test_the_clock_during_cold_holds_is_shown_where_both_runs_have_it(self):
        def clocked(path, after, during=None):
            def set_clocks(row):
                row.update(sm_mhz=after)
                if during is not None:
                    row.update(hold_mhz=during)
            return edit_rows(path, set_clocks)
        base = clocked(self.json(seed=1, sigma={PLANTED: 0.01}), 1980.0, 1975.0)
        run = clocked(self.json(seed=2, sigma={PLANTED: 0.01}, scale={PLANTED: 1.2}), 1900.0, 1690.0)
        rc, out, _ = self.regress(base, run)
        self.assertEqual(rc, 1, out)
        self.assertIn("SM clock after the case 1980 -> 1900 MHz, during its cold holds 1975 -> 1690 MHz", out)
        older = clocked(self.json(seed=1, sigma={PLANTED: 0.01}), 1980.0)  # a run from before hold_mhz
        rc, out, _ = self.regress(older, run)
        self.assertIn("SM clock after the case 1980 -> 1900 MHz", out)
        self.assertNotIn("during its cold holds", out)

    def test_a_change_of_timing_protocol_is_named(self):
        base = self.json(seed=1, ctx=gbfake.context(timing_protocol="v1"))
        run = self.json(seed=2, ctx=gbfake.context(timing_protocol="v2"))
        rc, out, _ = self.regress(base, run)
        self.assertIn("WARNING: different timing protocols", out)
        self.assertIn("'v1'", out)
        rc, out, _ = self.regress(base, self.json(seed=3, ctx=gbfake.context(timing_protocol="v1")))
        self.assertNotIn("timing protocols", out)

    def test_a_change_of_kv_placement_is_named(self):
        base = self.json(seed=1)  # recorded before the setting existed: separate allocations
        rc, out, _ = self.regress(base, self.json(seed=2, ctx=gbfake.context(kv_placement="one allocation, gap 0")))
        self.assertIn("WARNING: different K / V placements", out)
        self.assertIn("'separate'", out)
        rc, out, _ = self.regress(base, self.json(seed=3, ctx=gbfake.context(kv_placement="separate")))
        self.assertNotIn("K / V placements", out)

    def test_a_change_of_physical_gpu_is_named(self):
        a, b = "GPU-16a6529d-a36c-cc66-fd50-a1e2d2521306", "GPU-00000000-1111-2222-3333-444444444444"
        base = self.json(seed=1, ctx=gbfake.context(gpu_uuid=a))
        rc, out, _ = self.regress(base, self.json(seed=2, ctx=gbfake.context(gpu_uuid=b)))
        self.assertIn("WARNING: different physical GPUs of one model", out)
        self.assertIn(f"baseline {a}, run {b}", out)
        for ctx in (gbfake.context(gpu_uuid=a), gbfake.context()):  # the same GPU; a run that did not record it
            rc, out, _ = self.regress(base, self.json(seed=3, ctx=ctx))
            self.assertNotIn("physical GPUs", out)

    def test_slowdown_within_the_noise_is_not_a_regression(self):
        base = self.json(seed=1, sigma={PLANTED: 0.06})
        run = self.json(seed=2, sigma={PLANTED: 0.06}, scale={PLANTED: 1.10})
        rc, out, _ = self.regress(base, run)
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.verdicts(out)[PLANTED], "SLOWER-BUT-NOISE")

    def test_bimodal_repetitions_that_follow_the_clock_pass(self):
        """3 repetitions, one or two at a lower SM clock, no change between the runs: the range
        sees the 10% spread that MAD of 3 ignored; a shift beyond it is still caught."""
        base = set_repetitions(self.json(seed=1, reps=3), CUDNN, CUDNN_RUN1)
        run = set_repetitions(self.json(seed=2, reps=3), CUDNN, CUDNN_RUN2)
        rc, out, _ = self.regress(base, run)
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.verdicts(out)[CUDNN], "SLOWER-BUT-NOISE")
        row = next(line.split() for line in out.splitlines() if line.startswith(CUDNN))
        self.assertEqual(row[4], f"{(3598.9 - 3237.9) / 1.693:.2f}")  # the run's range / d2(3)
        self.assertTrue(out.rstrip().endswith("PASS"))
        slower = set_repetitions(self.json(seed=2, reps=3), CUDNN,
                                 [(us * 1.25, mhz) for us, mhz in CUDNN_RUN1])
        rc, out, _ = self.regress(base, slower)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"REGRESSED: {CUDNN}", out)

    def test_noise_only_runs_pass(self):
        for seed in range(10):
            rc, out, _ = self.regress(self.json(seed=300 + seed), self.json(seed=400 + seed))
            self.assertEqual(rc, 0, out)
            self.assertEqual(len(self.verdicts(out)), len(CASES))
            self.assertTrue(out.rstrip().endswith("PASS"))

    def test_faster_run_passes(self):
        run = self.json(seed=2, scale={c["name"]: 0.8 for c in CASES})
        rc, out, _ = self.regress(self.json(seed=1), run, "--min-delta-us", "0")
        self.assertEqual(rc, 0, out)
        self.assertEqual(set(self.verdicts(out).values()), {"FAST"})

    def test_a_missing_case_fails_and_is_named_and_new_cases_are_listed(self):
        base = self.json(CASES[:-1] + [gbfake.rmsnorm("naive", "bf16", 7, 4096, "cold")], seed=1)
        rc, out, _ = self.regress(base, self.json(seed=2), table=False)
        self.assertEqual(rc, 1, out)
        self.assertTrue(out.startswith("FAIL: 0 regressed, 0 errors, 1 missing of the baseline's "), out)
        missing = out.split("MISSING (in baseline, not measured in run): 1\n")[1].splitlines()[0]
        added = out.split("NEW (in run, not in baseline): 1\n")[1].splitlines()[0]
        self.assertEqual(missing.strip(), "rmsnorm/naive/bf16/t7_h4096/cold")
        self.assertEqual(added.strip(), "floor/empty_kernel/hot")
        self.assertTrue(out.rstrip().endswith("FAIL"))
        rc, out, _ = self.regress(base, self.json(seed=2), "--allow-missing", table=False)
        self.assertEqual(rc, 0, out)
        self.assertTrue(out.startswith("PASS: 0 regressed, 0 errors, 1 missing"), out)
        self.assertIn("MISSING (in baseline, not measured in run): 1 (allowed: --allow-missing)", out)

    def test_an_empty_run_fails_even_with_allow_missing(self):
        empty = self.json([], seed=2)
        for extra in ((), ("--allow-missing",)):
            rc, out, _ = self.regress(self.json(seed=1), empty, *extra, table=False)
            self.assertEqual(rc, 1, out)
            self.assertTrue(out.startswith("FAIL: "), out)
            self.assertIn("(an empty run fails)", out)

    def test_the_missing_are_listed_20_then_counted(self):
        run = self.json([c for c in CASES if not c["name"].startswith("attention/")], seed=2)
        n = sum(c["name"].startswith("attention/") for c in CASES)
        rc, out, _ = self.regress(self.json(seed=1), run, table=False)
        self.assertEqual(rc, 1, out)
        listed = out.split(f"MISSING (in baseline, not measured in run): {n}\n")[1].splitlines()
        self.assertTrue(all(line.startswith("  attention/") for line in listed[:20]), listed)
        self.assertEqual(listed[20], f"  ... and {n - 20} more (--table lists them all)")

    def test_filter_names_the_subset_the_run_must_hold(self):
        base = self.json(seed=1)
        run = self.json([c for c in CASES if c["name"].startswith("rmsnorm/")], seed=2)
        rc, out, _ = self.regress(base, run, "--filter", "^rmsnorm/", table=False)
        self.assertEqual(rc, 0, out)
        subset = sum(c["name"].startswith("rmsnorm/") for c in CASES)
        self.assertTrue(out.startswith(f"PASS: 0 regressed, 0 errors, 0 missing of the baseline's {subset} cases "
                                       "matching --filter '^rmsnorm/'"), out)
        rc, out, _ = self.regress(base, run, "--filter", "^(rmsnorm|floor)/", table=False)
        self.assertEqual(rc, 1, out)
        self.assertIn("  floor/empty_kernel/cold", out)
        self.assertNotIn("  attention/", out)
        for bad, fragment in (("(", "is not a regular expression"), ("^gemm/", "matches none of the baseline's")):
            rc, out, err = self.regress(base, run, "--filter", bad)
            self.assertEqual(rc, 2, out + err)
            self.assertIn(fragment, err)

    def test_identical_runs_pass(self):
        run = self.json(seed=1)
        rc, out, _ = self.regress(run, run, table=False)
        self.assertEqual(rc, 0, out)
        self.assertTrue(out.startswith(f"PASS: 0 regressed, 0 errors, 0 missing of the baseline's {len(CASES)} "
                                       f"cases; the run holds {len(CASES)}"), out)
        self.assertIn(f"{len(CASES)} compared: SAME {len(CASES)}", out)

    def test_the_default_output_is_a_short_summary_and_the_table_is_asked_for(self):
        """1,400 cases, 25 of them slower and 30 missing: the summary names 20 of each and counts the rest."""
        many = [gbfake.rmsnorm(impl, "bf16", rows, 4096, mode) for rows in range(1, 101)
                for impl in gbfake.RMSNORM_EFF for mode in ("cold", "hot")]
        slowed = {c["name"]: 3.0 for c in many[:25]}
        base = self.json(many, seed=1)
        run = self.json(many[:-30], seed=2, scale=slowed)
        rc, out, _ = self.regress(base, run, table=False)
        self.assertEqual(rc, 1, out)
        lines = out.splitlines()
        self.assertLess(len(lines), 60, out)
        self.assertTrue(lines[0].startswith("FAIL: 25 regressed, 0 errors, 30 missing of the baseline's 1400 cases"))
        self.assertEqual(sum(line.startswith("REGRESSED: ") for line in lines), 20)
        self.assertIn("... and 5 more failing cases", out)
        self.assertIn("  ... and 10 more (--table lists them all)", out)
        rc, quiet, _ = self.regress(base, self.json(many, seed=2), table=False)
        self.assertEqual(rc, 0, quiet)
        self.assertLess(len(quiet.splitlines()), 40, quiet)
        self.assertEqual(len(self.verdicts(quiet)), 0)
        rc, full, _ = self.regress(base, run)
        self.assertEqual(len([line for line in full.splitlines() if line.startswith("rmsnorm/")]), 1370)
        table = self.tmp / "table.txt"
        rc, out, _ = self.regress(base, run, "--table-out", table, table=False)
        self.assertIn(f"table: {table}", out)
        self.assertEqual(len([line for line in table.read_text().splitlines() if line.startswith("rmsnorm/")]), 1370)
        self.assertIn("rmsnorm/", table.read_text().split("MISSING (in baseline, not measured in run): 30\n")[1])

    def test_error_in_run_fails(self):
        run = self.json(seed=2, errors={PLANTED: "verification failed: err 4.1 > 1"})
        rc, out, _ = self.regress(self.json(seed=1), run)
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.verdicts(out)[PLANTED], "ERROR")
        self.assertIn(f"ERROR: {PLANTED}: verification failed", out)
        self.assertTrue(out.startswith("FAIL: 0 regressed, 1 errors, 0 missing"), out)
        new = gbfake.rmsnorm("naive", "bf16", 7, 4096, "cold")  # an error in a case the baseline lacks fails too
        run = self.json(CASES + [new], seed=2, errors={new["name"]: "CUDA error: an illegal memory access"})
        rc, out, _ = self.regress(self.json(seed=1), run, table=False)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"ERROR: {new['name']}: CUDA error: an illegal memory access", out)

    def test_skip_in_run_is_missing_where_the_baseline_measured_it(self):
        skip = {PLANTED: "skipped: needs sm_90a"}
        rc, out, _ = self.regress(self.json(seed=1), self.json(seed=2, errors=skip), table=False)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"  {PLANTED}: skipped in the run: skipped: needs sm_90a", out)
        rc, out, _ = self.regress(self.json(seed=1, errors=skip), self.json(seed=2, errors=skip))
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.verdicts(out)[PLANTED], "NO-COMPARISON")

    def test_malformed_input_is_exit_2_naming_the_file(self):
        good = self.json(seed=1)
        cut = self.tmp / "cut.json"
        cut.write_text(good.read_text()[:5000])
        nobench = self.tmp / "nobench.json"
        nobench.write_text('{"context": {}}')
        for bad, fragment in ((cut, "not valid JSON"), (nobench, "no 'benchmarks' list")):
            rc, out, err = self.regress(good, bad)
            self.assertEqual(rc, 2, out + err)
            self.assertIn(str(bad), err)
            self.assertIn(fragment, err)
        rc, _, err = self.regress(good)
        self.assertEqual(rc, 2)
        self.assertIn("usage", err)

    def test_fingerprint_check_warns_on_stale_results(self):
        repo = self.tmp / "repo"
        (repo / "kernels").mkdir(parents=True)
        (repo / "kernels" / "a.cu").write_text("// v1\n")
        rc, out, _ = self.regress(self.json(seed=1), self.json(seed=2),
                                  "--fingerprint-check", repo)
        self.assertEqual(rc, 0, out)
        self.assertIn("WARNING: stale results", out)
        ctx = gbfake.context(kernels_fingerprint=regress.sbresults.kernels_fingerprint(repo))
        rc, out, _ = self.regress(self.json(seed=1), self.json(seed=2, ctx=ctx),
                                  "--fingerprint-check", repo)
        self.assertNotIn("WARNING", out)


class Rule(unittest.TestCase):
    """The decision rule on hand-made numbers."""

    def test_threshold_and_noise_must_both_be_exceeded(self):
        self.assertEqual(regress.verdict(100, 110, 1.0, 0.05, 3), "REGRESSED")
        self.assertEqual(regress.verdict(100, 110, 4.0, 0.05, 3), "SLOWER-BUT-NOISE")
        self.assertEqual(regress.verdict(100, 104, 0.1, 0.05, 3), "SAME")
        self.assertEqual(regress.verdict(100, 90, 1.0, 0.05, 3), "FAST")
        self.assertEqual(regress.verdict(100, 90, 4.0, 0.05, 3), "SAME")

    def test_spread_is_range_over_d2_up_to_10_repetitions(self):
        self.assertEqual(regress.spread([10.0, 11.0]), (1.0 / 1.128, "range/d2(2)"))
        # run 1 of the cuDNN case of the module docstring: MAD would give 1.4826 x 2.3 = 3.41
        noise, how = regress.spread([172.8, 175.1, 188.3])
        self.assertAlmostEqual(noise, 15.5 / 1.693)
        self.assertEqual(how, "range/d2(3)")
        noise, how = regress.spread([10.0, 10.1, 9.9, 10.0, 13.0])
        self.assertAlmostEqual(noise, 3.1 / 2.326)
        self.assertEqual(how, "range/d2(5)")
        self.assertAlmostEqual(regress.spread([5.0] * 9 + [8.078])[0], 1.0)  # d2(10) = 3.078

    def test_spread_is_mad_beyond_10_repetitions(self):
        # median 20.0; absolute deviations 0 0 0 .1 .1 .1 .1 .2 .2 .3 .3 6.0, median 0.1: the
        # 26.0 outlier does not count
        times = [20.0, 20.2, 19.8, 20.1, 19.9, 20.0, 20.3, 19.7, 20.0, 20.1, 19.9, 26.0]
        noise, how = regress.spread(times)
        self.assertAlmostEqual(noise, 1.4826 * 0.1)
        self.assertEqual(how, "1.4826 x MAD")
        self.assertEqual(regress.spread([5.0] * 10 + [8.0])[1], "1.4826 x MAD")

    def test_spread_is_zero_below_2_repetitions(self):
        self.assertEqual(regress.spread([10.0])[0], 0.0)
        self.assertEqual(regress.spread([])[0], 0.0)

class RegressOnH200Runs(unittest.TestCase):
    """The rule on real data (tests/scripts/data/h200_rmsnorm_run_*.json.xz): bench_rmsnorm's vectorized and
    torch_rms_norm bf16 cases at the anchor shapes, 5 repetitions, on one H200 with one binary (run_a, then
    run_b right after it), and run_slowed, the same command after a rebuild with the vectorized variant's
    16-byte path disabled. The two runs of one build pass against each other; the slowed build fails, and
    the slowed cases are named; without the 1 us floor, microsecond-scale drift between the two runs of one
    build fails."""
    RUN_A = DATA / "h200_rmsnorm_run_a.json.xz"
    RUN_B = DATA / "h200_rmsnorm_run_b.json.xz"
    RUN_SLOWED = DATA / "h200_rmsnorm_run_slowed.json.xz"

    def regress(self, *args):
        out = subprocess.run([sys.executable, str(SCRIPTS / "regress.py"), *map(str, args)],
                             capture_output=True, text=True)
        return out.returncode, out.stdout

    def test_same_build_passes(self):
        rc, out = self.regress(self.RUN_A, self.RUN_B)
        self.assertEqual(rc, 0, out)
        self.assertTrue(out.rstrip().endswith("PASS"))

    def test_slowed_build_fails_and_names_the_cases(self):
        rc, out = self.regress(self.RUN_B, self.RUN_SLOWED)
        self.assertEqual(rc, 1, out)
        self.assertIn("REGRESSED: rmsnorm/vectorized/bf16/t16384_h4096/cold", out)
        self.assertNotIn("REGRESSED: rmsnorm/torch_rms_norm", out)

    def test_same_build_with_clock_following_repetitions_passes(self):
        """Excerpt of two back-to-back full runs of one build, 3 repetitions each
        (tests/scripts/data/h200_same_build_run*_excerpt.json, the cases whose verdict the noise
        rule decides): 1.4826 x MAD called three of them REGRESSED."""
        rc, out = self.regress(DATA / "h200_same_build_run1_excerpt.json",
                               DATA / "h200_same_build_run2_excerpt.json")
        self.assertEqual(rc, 0, out)
        self.assertNotIn("REGRESSED", out)
        self.assertIn("7 compared: SAME 4, SLOWER-BUT-NOISE 3", out)

    def test_microsecond_drift_is_a_regression_only_without_the_floor(self):
        rc, out = self.regress(self.RUN_A, self.RUN_B,
                               "--min-delta-us", "0")
        self.assertEqual(rc, 1, out)


if __name__ == "__main__":
    unittest.main()
