"""The sanitizer stage's racecheck rule, against the real test_gpu's list of tests (no GPU needed).

    python3 tests/test_sanitizer_filter.py BUILD/tests/test_gpu

scripts/sanitize.sh runs racecheck over its filter less the parameterized RepeatedRunsAreBitIdentical tests,
on the ground that each launches its MatchesReference twin's kernel with the same parameter twice. This runs
sanitize.sh over the real binary with a stand-in compute-sanitizer that only lists the tests each tool's filter
selects, and checks that ground: memcheck gets every test; racecheck every test but the parameterized repeats;
every repeat left out has a Matches* twin of the same parameter in its suite that racecheck keeps; and a
repeat with no such twin (DecodeSplitk's) stays in.
"""
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BINARY = None

# compute-sanitizer's stand-in: the binary's own list of the tests its filter selects, then a clean summary.
FAKE_SANITIZER = """#!/bin/bash
while [ $# -gt 0 ]; do case $1 in --tool) tool=$2; shift 2 ;; --error-exitcode) shift 2 ;; *) break ;; esac; done
"$@" --gtest_list_tests || exit 1
[ "$tool" = memcheck ] && echo "========= ERROR SUMMARY: 0 errors" ||
  echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
"""


def parse_list(text):
    """GoogleTest's --gtest_list_tests output as full names, 'Prefix/Suite.Test/param'."""
    names, suite = [], None
    for line in text.splitlines():
        if not line.strip() or line.startswith(("=", "Running main", "Note:")):
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
        else:
            names.append(suite + line.split("#")[0].strip())
    return names


class RacecheckRule(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        (d / "bin").mkdir()
        fake = d / "bin" / "compute-sanitizer"
        fake.write_text(FAKE_SANITIZER)
        fake.chmod(0o755)
        env = dict(os.environ, PATH=f"{d / 'bin'}:{os.environ['PATH']}", SHARDS="1")
        for name in ("RACECHECK_FILTER", "TIMEOUT"):  # the caller's settings of sanitize.sh must not reach it
            env.pop(name, None)
        cls.proc = subprocess.run(["bash", str(REPO / "scripts" / "sanitize.sh"), BINARY, str(d / "san"),
                                   "memcheck,racecheck", "*"], capture_output=True, text=True, env=env, timeout=120)
        cls.lists = {tool: parse_list((d / f"san_{tool}_0.log").read_text())
                     for tool in ("memcheck", "racecheck") if (d / f"san_{tool}_0.log").exists()}
        everything = subprocess.run([BINARY, "--gtest_list_tests"], capture_output=True, text=True, timeout=60)
        cls.all = parse_list(everything.stdout)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_sanitize_passes_with_the_stand_in(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout + self.proc.stderr)
        self.assertGreater(len(self.all), 500)

    def test_memcheck_gets_every_test(self):
        self.assertEqual(self.lists["memcheck"], self.all)

    def test_racecheck_leaves_out_only_repeats_that_have_a_twin_it_keeps(self):
        kept = set(self.lists["racecheck"])
        left_out = [n for n in self.all if n not in kept]
        self.assertTrue(left_out)
        for name in left_out:
            prefix_suite, rest = name.split(".", 1)
            test, _, param = rest.partition("/")
            self.assertEqual(test, "RepeatedRunsAreBitIdentical", name)
            self.assertTrue(param, f"{name}: a plain test has no twin by parameter")
            twins = [n for n in kept if n.startswith(prefix_suite + ".Matches") and n.endswith("/" + param)]
            self.assertEqual(len(twins), 1, f"{name}: twins {twins}")

    def test_the_repeat_with_no_twin_stays_in(self):
        self.assertIn("DecodeSplitk.RepeatedRunsAreBitIdentical", self.lists["racecheck"])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_sanitizer_filter.py TEST_GPU_BINARY")
    BINARY = sys.argv.pop(1)
    unittest.main()
