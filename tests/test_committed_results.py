#!/usr/bin/env python3
"""The committed results, checked on any machine. For every results/<gpu>/ with a latest.json.xz:
- latest.json.xz loads, carries the run context the report needs and has no failed case;
- latest.json.xz and baseline.json.xz are distinct regular files (a link or a missing baseline breaks the
  gate the day latest.json.xz is replaced);
- the regression gate passes on baseline vs latest, and fails on a copy of latest with one case planted
  20% slower (the gate CI runs can fail);
- REPORT.md (and any report/*.md) is exactly what scripts/report.py generates from the folder: nobody
  edited it by hand;
and results/ holds no history/ folder and stays under 5 MB (earlier runs live in git history).

usage: test_committed_results.py REPO_ROOT
"""
import json
import lzma
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = None
CONTEXT_KEYS = ("gpu_name", "sm_count", "l2_bytes", "sm_clock_mhz", "driver", "cuda_runtime", "torch_version",
                "git_commit", "kernels_fingerprint", "build_type", "copy_gbps", "gemm_tflops")
MAX_RESULTS_BYTES = 5 * 10**6


def result_dirs():
    return sorted(p.parent for p in (ROOT / "results").glob("*/latest.json.xz"))


def regress(baseline, run):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "regress.py"), str(baseline), str(run)],
                          capture_output=True, text=True)


def sbresults():
    sys.path.insert(0, str(ROOT / "scripts"))
    import sbresults as module
    return module


class CommittedResults(unittest.TestCase):
    def test_there_are_results(self):
        self.assertTrue(result_dirs(), "no results/<gpu>/latest.json.xz committed")

    def test_latest_loads_with_the_context_the_report_needs_and_no_failed_case(self):
        sb = sbresults()
        for d in result_dirs():
            run = sb.load(d / "latest.json.xz")
            for key in CONTEXT_KEYS:
                self.assertIn(key, run.context, f"{d}/latest.json.xz: context lacks {key}")
            self.assertGreater(float(run.context["copy_gbps"]), 0)
            self.assertTrue(run.cases, f"{d}/latest.json.xz holds no case")
            failed = [c.name for c in run.cases if c.failed]
            self.assertEqual(failed, [], f"{d}/latest.json.xz has failed cases")

    def test_latest_and_baseline_are_files_of_their_own(self):
        for d in result_dirs():
            for name in ("latest.json.xz", "baseline.json.xz"):
                p = d / name
                self.assertFalse(p.is_symlink(), f"{p} is a link; it must be a file of its own")
                self.assertTrue(p.is_file(), f"{p} is missing")
            self.assertFalse((d / "latest.json.xz").samefile(d / "baseline.json.xz"),
                             f"{d}: latest.json.xz and baseline.json.xz are one file")

    def test_regression_gate_passes_against_the_baseline(self):
        for d in result_dirs():
            r = regress(d / "baseline.json.xz", d / "latest.json.xz")
            self.assertEqual(r.returncode, 0, f"{d}: regress.py baseline latest failed\n{r.stdout}{r.stderr}")
            self.assertTrue(r.stdout.rstrip().endswith("PASS"), r.stdout)

    def test_regression_gate_catches_a_planted_slowdown(self):
        sb = sbresults()
        for d in result_dirs():
            doc = json.loads(sb.read_text(d / "latest.json.xz"))
            # The slowest case that ran: 20% of it is far above the gate's 1 us floor and its noise.
            run = sb.load(d / "latest.json.xz")
            victim = max((c for c in run.cases if c.ok), key=lambda c: c.median_us).name
            for row in doc["benchmarks"]:
                if sb.case_name(row.get("run_name", row["name"])) == victim and "real_time" in row:
                    row["real_time"] *= 1.2
                    row["cpu_time"] = row.get("cpu_time", 0) * 1.2
            with tempfile.TemporaryDirectory() as tmp:
                slowed = pathlib.Path(tmp) / "slowed.json.xz"
                with lzma.open(slowed, "wt", encoding="utf-8") as f:
                    json.dump(doc, f)
                r = regress(d / "latest.json.xz", slowed)
            self.assertEqual(r.returncode, 1, f"{d}: a 20% slowdown of {victim} passed the gate\n{r.stdout}")
            self.assertIn(f"REGRESSED: {victim}:", r.stdout)

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
                r = subprocess.run([sys.executable, str(ROOT / "scripts" / "report.py"), str(rel)], cwd=tmp,
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                for md in ["REPORT.md"] + sorted(str(p.relative_to(d)) for p in d.glob("report/*.md")):
                    self.assertTrue((copy / md).is_file(), f"scripts/report.py no longer writes {d}/{md}")
                    self.assertEqual((copy / md).read_text(), (d / md).read_text(),
                                     f"{d}/{md} differs from what scripts/report.py generates: rerun it")
                made = sorted(p.name for p in (copy / "plots").glob("*.png"))
                committed = sorted(p.name for p in (d / "plots").glob("*.png"))
                self.assertEqual(made, committed, f"{d}/plots: committed plots differ from the generated set")

    def test_results_hold_the_current_run_only(self):
        results = ROOT / "results"
        self.assertEqual(sorted(str(p.relative_to(ROOT)) for p in results.glob("*/history")), [],
                         "earlier runs live in git history, not in results/")
        r = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "results"], capture_output=True)
        if r.returncode == 0:  # the committed files; logs/ of a local run are not counted
            files = [ROOT / f for f in r.stdout.decode().split("\0") if f]
        else:
            files = [p for p in results.rglob("*") if "logs" not in p.relative_to(results).parts]
        total = sum(f.stat().st_size for f in files if f.is_file() and not f.is_symlink())
        self.assertLessEqual(total, MAX_RESULTS_BYTES, f"results/ is {total / 1e6:.1f} MB, over 5 MB")


if __name__ == "__main__":
    if len(sys.argv) < 2 or not pathlib.Path(sys.argv[1]).is_dir():
        print("usage: test_committed_results.py REPO_ROOT", file=sys.stderr)
        sys.exit(2)
    ROOT = pathlib.Path(sys.argv.pop(1)).resolve()
    unittest.main(verbosity=2)
