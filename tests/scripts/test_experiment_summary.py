"""experiment_summary.py on synthetic timings: per-pass ratios to the default of the same pass, averaged;
malformed input and timings without a default are exit 2."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
import experiment_summary as es  # noqa: E402


def run(text, *args):
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write(text)
        f.flush()
        return subprocess.run([sys.executable, str(SCRIPTS / "experiment_summary.py"), f.name, *args],
                              capture_output=True, text=True)


def timings(per_pass):  # {build: [us per pass]} -> TIMINGS.txt's lines for one case "c"
    return "".join(f"{p} {b} c {us}\n" for b, runs in per_pass.items() for p, us in enumerate(runs, 1))


class ExperimentSummary(unittest.TestCase):
    def test_ratio_is_the_mean_of_same_pass_ratios(self):
        # The GPU 10% slower during pass 1: each build is compared with the default of its own pass.
        table, builds = es.parse(["1 default c 110", "1 X c 99", "2 X c 90", "2 default c 100"])
        self.assertEqual(builds, ["default", "X"])
        rows = {(c, b): (runs, r) for c, b, runs, r, _ in es.summarise(table, builds)}
        self.assertEqual(rows[("c", "default")], ([110.0, 100.0], None))
        runs, ratio = rows[("c", "X")]
        self.assertEqual(runs, [99.0, 90.0])
        self.assertAlmostEqual(ratio, (99 / 110 + 90 / 100) / 2)

    def test_a_build_without_the_default_in_a_pass_uses_the_shared_passes(self):
        table, builds = es.parse(["1 default c 10", "1 X c 20", "2 X c 5"])
        rows = {(c, b): (r, n) for c, b, _, r, n in es.summarise(table, builds)}
        self.assertAlmostEqual(rows[("c", "X")][0], 2.0)
        self.assertEqual(rows[("c", "X")][1], 1)

    def test_cli_prints_ratios(self):
        r = run("1 default rmsnorm/vectorized/bf16/t1_h4096/cold 4.0\n1 SB_X_1 rmsnorm/vectorized/bf16/t1_h4096/cold 3.0\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("x0.750 (1 pass)", r.stdout)
        self.assertIn("note: 1 of 1 ratios rest on one pass", r.stdout)

    def test_two_passes_carry_no_one_pass_mark(self):
        r = run("1 default c 4.0\n1 X c 3.0\n2 X c 3.0\n2 default c 4.0\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("x0.750", r.stdout)
        self.assertNotIn("1 pass", r.stdout)
        self.assertNotIn("note:", r.stdout)

    def test_malformed_line_is_exit_2_naming_it(self):
        r = run("1 default case 4.0\nnot a timing line\n")
        self.assertEqual(r.returncode, 2)
        self.assertIn("line 2", r.stderr)

    def test_no_default_is_exit_2(self):
        r = run("1 SB_X_1 case 4.0\n")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no case has both a default and another build", r.stderr)

    def test_a_control_reads_each_build_against_its_own_ratios_of_the_same_passes(self):
        # Session 49, c240, 1 x 8192 and 64 x 8192 (the figures rounded as the bench prints them): the
        # candidate is below the control in every pass at one, overlaps it at the other.
        for per_pass, verdict in (
                ({"default": [0.95, 0.97, 0.96, 0.98], "cand": [0.93, 0.94, 0.89, 0.94], "ctrl": [0.97, 0.96, 0.97, 0.98]},
                 "faster than the control"),
                ({"default": [1.46, 1.50, 1.46, 1.50], "cand": [1.54, 1.56, 1.63, 1.56], "ctrl": [1.48, 1.50, 1.52, 1.48]},
                 "within the control"),
                ({"default": [1.0, 1.0, 1.0], "cand": [1.10, 1.08, 1.12], "ctrl": [1.01, 0.99, 1.02]},
                 "slower than the control")):
            with self.subTest(verdict=verdict):
                r = run(timings(per_pass), "--control", "ctrl")
                self.assertEqual(r.returncode, 0, r.stderr)
                cand = next(line for line in r.stdout.splitlines() if " cand " in line)
                self.assertTrue(cand.endswith(verdict), cand)
                ctrl = next(line for line in r.stdout.splitlines() if " ctrl " in line)
                self.assertNotIn("control", ctrl)  # the control is not read against itself

    def test_a_control_over_too_few_passes_gives_no_verdict(self):
        r = run(timings({"default": [1.0, 1.0], "cand": [0.5, 0.5], "ctrl": [1.0, 1.0]}), "--control", "ctrl")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"(under {es.MIN_CONTROL_PASSES} passes with the control: no verdict)", r.stdout)
        self.assertNotIn("faster than", r.stdout)

    def test_a_control_that_names_no_build_is_exit_2(self):
        for control in ("nothing", "default"):
            with self.subTest(control=control):
                r = run(timings({"default": [1.0], "cand": [0.5]}), "--control", control)
                self.assertEqual(r.returncode, 2)
                self.assertIn(f"--control {control} names no build other than the default", r.stderr)


if __name__ == "__main__":
    unittest.main()
