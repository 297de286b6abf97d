#!/usr/bin/env python3
"""A bench run cut short keeps what it measured (needs a GPU; skips, saying why, without one, and fails without one
under SOLBENCH_REQUIRE_GPU=1).

usage: test_interrupted_run.py PATH/TO/bench_rmsnorm
- a run that ends normally writes --benchmark_out and leaves no partial results file;
- a run sent SIGTERM once it has finished 2 repetitions leaves <out>.partial.jsonl with them, and sbresults,
  export_csv.py and regress.py read the finished cases from it (the run marked incomplete).
"""
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

BENCH = None
ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
NO_GPU_EXIT = 77
WAIT_S = 300  # for the partial file's first 2 repetitions (the ceilings are measured first)


def script(name, *args):
    return subprocess.run([sys.executable, str(SCRIPTS / name), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def repetition_lines(path):
    """The finished lines of a partial results file after its context line (0 while it does not exist)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return 0
    return max(0, text.count("\n") - 1)


class InterruptedRun(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="sbinterrupted_"))
        self.addCleanup(shutil.rmtree, self.tmp)
        out = self.tmp / "whole.json"
        r = subprocess.run([BENCH, "--benchmark_filter=^floor/empty_kernel/cold", "--benchmark_repetitions=2",
                            f"--benchmark_out={out}"], capture_output=True, text=True, timeout=300)
        if r.returncode == NO_GPU_EXIT:
            if os.environ.get("SOLBENCH_REQUIRE_GPU"):
                self.fail(f"no GPU: {r.stderr.strip()}")
            self.skipTest(f"no GPU: {r.stderr.strip()}")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.whole = out

    def test_a_run_that_ends_normally_leaves_no_partial_file(self):
        self.assertTrue(self.whole.is_file())
        self.assertFalse(pathlib.Path(str(self.whole) + ".partial.jsonl").exists())

    def test_the_repetitions_finished_before_sigterm_are_read(self):
        out = self.tmp / "cut.json"
        partial = pathlib.Path(str(out) + ".partial.jsonl")
        proc = subprocess.Popen([BENCH, "--shapes=smoke", "--benchmark_repetitions=3", f"--benchmark_out={out}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + WAIT_S
            while repetition_lines(partial) < 2 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            self.assertIsNone(proc.poll(), "the run ended before it could be cut short")
            self.assertGreaterEqual(repetition_lines(partial), 2, f"no 2 repetitions in {WAIT_S} s")
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(proc.returncode, -signal.SIGTERM)
        self.assertTrue(partial.is_file(), "the partial results file was not left")

        sys.path.insert(0, str(SCRIPTS))
        import sbresults
        run = sbresults.load(partial)
        self.assertTrue(run.incomplete)
        self.assertGreaterEqual(sum(len(c.times_us) + bool(c.error) for c in run.cases), 2)
        self.assertTrue(run.context.get("gpu_name"), run.context)
        if not out.is_file() or out.stat().st_size == 0:
            out.write_text("")  # as Google Benchmark left it when nothing had been flushed
        self.assertEqual(len(sbresults.load(out).cases), len(run.cases))  # the partial file stands in for it

        r = script("export_csv.py", partial, "-o", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 1 + len(run.cases))
        r = script("regress.py", self.whole, partial)  # the baseline's floor case may not be finished in the run
        self.assertIn("WARNING: the run is incomplete", r.stdout)
        r = script("regress.py", partial, partial)
        self.assertEqual(r.returncode, 1 if any(c.failed for c in run.cases) else 0, r.stdout)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    BENCH = sys.argv.pop(1)
    result = unittest.main(verbosity=2, exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)
    # Every test skipped (no GPU): exit 77, which ctest reports as Skipped rather than Passed.
    sys.exit(77 if len(result.skipped) == result.testsRun else 0)
