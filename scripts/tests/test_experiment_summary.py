"""experiment_summary.py on synthetic timings: per-pass ratios to the default of the same pass, averaged;
malformed input and timings without a default are exit 2."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))
import experiment_summary as es  # noqa: E402


def run(text):
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write(text)
        f.flush()
        return subprocess.run([sys.executable, str(SCRIPTS / "experiment_summary.py"), f.name],
                              capture_output=True, text=True)


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


if __name__ == "__main__":
    unittest.main()
