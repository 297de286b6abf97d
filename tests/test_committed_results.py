#!/usr/bin/env python3
"""The committed results, checked on any machine: every results/<gpu>/latest.json loads, carries
the run context the report needs, passes the regression gate against its baseline.json, and
REPORT.md is exactly what scripts/report.py generates from it (nobody edited it by hand);
scripts/acceptance.py evaluates every item on it; every entry of results/<gpu>/history/ is named in that
folder's README.md; history/ keeps its large files gzipped, so the tree a GPU run is copied with stays
under the device tool's 64 MiB.

usage: test_committed_results.py REPO_ROOT
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = None
CONTEXT_KEYS = ("gpu_name", "sm_count", "l2_bytes", "sm_clock_mhz", "driver", "cuda_runtime", "torch_version",
                "git_commit", "kernels_fingerprint", "build_type", "copy_gbps", "gemm_tflops")


def result_dirs():
    return sorted(p.parent for p in (ROOT / "results").glob("*/latest.json"))


class CommittedResults(unittest.TestCase):
    def test_there_are_results(self):
        self.assertTrue(result_dirs(), "no results/<gpu>/latest.json committed")

    def test_context_is_complete(self):
        sys.path.insert(0, str(ROOT / "scripts"))
        import sbresults
        for d in result_dirs():
            run = sbresults.load(d / "latest.json")
            for key in CONTEXT_KEYS:
                self.assertIn(key, run.context, f"{d}/latest.json: context lacks {key}")
            self.assertGreater(float(run.context["copy_gbps"]), 0)
            failed = [c.name for c in run.cases if c.failed]
            self.assertEqual(failed, [], f"{d}/latest.json has failed cases")

    def test_the_current_run_is_stored_once(self):
        # latest.json and baseline.json link to a stamped run beside them (scripts/adopt_run.py, run_suite.sh):
        # every GPU command carries the whole tracked tree, limited to 64 MiB, and three copies of a 6.7 MB run
        # took 13 MB of it. (After a local run_suite.sh, latest.json links to that run's new stamped file.)
        sys.path.insert(0, str(ROOT / "scripts"))
        from adopt_run import STAMP  # the stamped file's name, as run_suite.sh and adopt_run.py write it
        for d in result_dirs():
            for name in ("latest.json", "baseline.json"):
                link = d / name
                self.assertTrue(link.is_symlink(), f"{link} should be a link to a stamped run, not a copy")
                target = str(link.readlink())
                self.assertRegex(target, STAMP, f"{link} links to {target}, not a stamped run beside it")
                self.assertTrue((d / target).is_file(), f"{link} links to {target}, which is missing")

    def test_regression_gate_passes_against_baseline(self):
        for d in result_dirs():
            r = subprocess.run([sys.executable, str(ROOT / "scripts/regress.py"), str(d / "baseline.json"),
                                str(d / "latest.json")], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_acceptance_evaluates(self):
        # NOTES.md's status table quotes scripts/acceptance.py on these results: it must run on them.
        for d in result_dirs():
            r = subprocess.run([sys.executable, str(ROOT / "scripts/acceptance.py"), str(d)], capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertNotIn("not evaluated", r.stdout, f"{d}: an acceptance item could not be evaluated")

    def test_every_history_entry_is_described(self):
        # NOTES.md and the kernel sources cite history/ for every earlier step: an entry its README does not
        # name (in backquotes, as its table does) is a result nobody can place.
        for d in result_dirs():
            hist = d / "history"
            if not hist.is_dir():
                continue
            readme = hist / "README.md"
            self.assertTrue(readme.is_file(), f"{hist} has no README.md describing its entries")
            text = readme.read_text()
            undescribed = [p.name for p in sorted(hist.iterdir())
                           if p.name != "README.md" and f"`{p.name}`" not in text and f"`{p.name}/`" not in text]
            self.assertEqual(undescribed, [], f"{readme}: entries not named in its table")

    def test_history_keeps_large_files_gzipped(self):
        # Every GPU command travels with the tracked tree, which may not exceed 64 MiB. history/ grows every
        # session, so anything of its over 64 KB is stored gzipped (sbresults and zcat read it as it is).
        # Counted in 4 KB blocks the tree passed 64 MiB in session 48 (68.4 MiB, 60.7 in bytes); no GPU
        # command reads history/, and session 48's ran with it moved out of the working tree.
        for d in result_dirs():
            hist = d / "history"
            big = [str(p.relative_to(d)) for p in hist.rglob("*") if p.is_file() and p.stat().st_size > 64 * 1024
                   and p.suffix not in (".gz", ".tgz", ".png") and p.name != "README.md"]
            self.assertEqual(big, [], f"{hist}: gzip these (and the references to them)")

    def test_report_is_generated_not_edited(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib is not installed: cannot regenerate the report")
        for d in result_dirs():
            with tempfile.TemporaryDirectory() as tmp:
                rel = d.relative_to(ROOT)
                copy = pathlib.Path(tmp) / rel
                shutil.copytree(d, copy, ignore=shutil.ignore_patterns("plots", "logs"))
                r = subprocess.run([sys.executable, str(ROOT / "scripts/report.py"), str(rel)], cwd=tmp,
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual((copy / "REPORT.md").read_text(), (d / "REPORT.md").read_text(),
                                 f"{d}/REPORT.md differs from what scripts/report.py generates: rerun it")
                made = sorted(p.name for p in (copy / "plots").glob("*.png"))
                committed = sorted(p.name for p in (d / "plots").glob("*.png"))
                self.assertEqual(made, committed, f"{d}/plots: committed plots differ from the generated set")


if __name__ == "__main__":
    ROOT = pathlib.Path(sys.argv.pop(1)).resolve()
    unittest.main(verbosity=2)
