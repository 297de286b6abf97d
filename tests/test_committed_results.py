#!/usr/bin/env python3
"""The committed results, checked on any machine: every results/<gpu>/latest.json loads, carries
the run context the report needs, passes the regression gate against its baseline.json, and
REPORT.md is exactly what scripts/report.py generates from it (nobody edited it by hand);
scripts/acceptance.py evaluates every item on it; every entry of results/<gpu>/history/ is named in that
folder's README.md, and every history/ path the notes, READMEs and sources cite exists; history/ keeps its
logs and JSONs over 8 KB compressed (its runs xz, the rest gzip), so the tree a GPU run is copied with stays under the device tool's 64 MiB.

usage: test_committed_results.py REPO_ROOT
"""
import glob
import pathlib
import re
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

    def test_every_history_path_cited_exists(self):
        # NOTES.md, NOTES_EARLIER.md, the history READMEs, the README, experiments/README.md and the sources cite
        # history/ paths as the evidence of their figures; session 50 moved half of NOTES.md into NOTES_EARLIER.md.
        # Each cited entry must be one history/README.md names, and a path inside an entry must exist where the
        # entry does (a GPU command's copy of the tree may leave history/'s folders out: tree size).
        cited = re.compile(r"(?:results/([a-z0-9]+)/)?history/(\d{4}-\d{2}-\d{2}_[A-Za-z0-9_.{},*/+-]*)")
        sources = [ROOT / "README.md", ROOT / "experiments" / "README.md"]
        for sub in ("kernels", "bench", "scripts", "tests", "ref"):
            sources += [f for f in (ROOT / sub).rglob("*") if f.is_file() and f.suffix in (".cu", ".cuh", ".h", ".cpp", ".py", ".sh")]
        for d in result_dirs():
            sources += sorted(d.glob("*.md")) + sorted((d / "history").glob("*README.md")) + \
                sorted((d / "history").glob("*/README.md"))
        missing = []
        for f in sources:
            if f.name == "REPORT.md":
                continue  # it embeds NOTES.md
            text = f.read_text(errors="replace")
            for m in cited.finditer(text):
                gpu = m.group(1) or (f.relative_to(ROOT / "results").parts[0] if "results" in f.parts else "h200")
                hist = ROOT / "results" / gpu / "history"
                path = m.group(2).rstrip(".,/")
                for p in self._expand_braces(path):
                    entry, _, rest = p.partition("/")
                    readme = hist / "README.md"
                    if "*" not in entry and readme.is_file() and f"`{entry}" not in readme.read_text():
                        missing.append(f"{f.relative_to(ROOT)}: history/{p} (no entry {entry} in {readme.relative_to(ROOT)})")
                    elif rest and (hist / entry).is_dir() and not glob.glob(str(hist / p)):
                        missing.append(f"{f.relative_to(ROOT)}: history/{p}")
        # A history folder's README cites files beside it, or a run then current, relative to itself: `../x`.
        # adopt_run.py moves the run it replaces into history/ compressed, so `../../<run>.json` then becomes
        # `../<run>.json.xz` (`.json.gz` before session 51; session 50 found ten such references stale).
        for d in result_dirs():
            for readme in sorted((d / "history").glob("*/README.md")):
                for m in re.finditer(r"`(\.\./[^`\s]+)`", readme.read_text()):
                    for p in self._expand_braces(m.group(1).rstrip("/")):
                        if not glob.glob(str(readme.parent / p)):
                            missing.append(f"{readme.relative_to(ROOT)}: {p}")
        self.assertEqual(missing, [], "cited history paths that do not exist")

    @staticmethod
    def _expand_braces(p):
        m = re.search(r"\{([^{}]*)\}", p)
        if not m:
            return [p]
        return [q for alt in m.group(1).split(",") for q in CommittedResults._expand_braces(p[:m.start()] + alt + p[m.end():])]

    def test_history_keeps_large_files_gzipped(self):
        # Every GPU command travels with the tracked tree, which may not exceed 64 MiB (the device tool counts
        # bytes, folders included). history/ grows every session, so its logs, JSONs, CSVs and texts over 8 KB
        # are stored gzipped, but for the files read by eye (an experiment's summary.txt and timings.txt, a
        # command's exp.txt and gpu_*.txt, a run's env_*.txt), and anything else over 64 KB but the READMEs
        # and images is too (sbresults, xzcat and zcat read them as they are). The tree passed 64 MiB in session 48
        # and GPU commands ran with history/ moved aside until session 50 gzipped the 291 text files over
        # 8 KB (67.5 -> 62.2 MB); session 51 stored the 74 runs and cross-checks of history/ as xz, not gzip
        # (20.8 -> 16.0 MB; adopt_run.py files the next ones so), and session 60 every other JSON (15.1 -> 11.0 MB).
        readable = ("summary.txt", "timings.txt", "exp.txt")
        for d in result_dirs():
            hist = d / "history"
            big = []
            for p in hist.rglob("*"):
                if not p.is_file() or p.suffix in (".gz", ".xz", ".tgz", ".png") or p.name == "README.md":
                    continue
                size = p.stat().st_size
                text_kind = p.suffix in (".log", ".json", ".csv", ".txt", ".err")
                by_eye = p.name in readable or (p.suffix == ".txt" and p.name.startswith(("gpu_", "env_")))
                if size > 64 * 1024 or (text_kind and not by_eye and size > 8 * 1024):
                    big.append(str(p.relative_to(d)))
            self.assertEqual(sorted(big), [], f"{hist}: compress these (JSONs xz -9, the rest gzip -9 -n) "
                             "and the references to them")

    def test_the_tree_a_gpu_command_carries_stays_under_64_mib(self):
        # The device tool copies the tracked tree with every GPU command and refuses one over 64 MiB, counting
        # bytes as du -sb does, a folder's entry included (4 KiB each). Adopting a run adds about 0.7 MB (the
        # earlier run, gzipped, into history/), an experiment folder a few hundred KB; 62 MiB leaves room for the
        # command's own scripts and what it carries. This fails before the device does.
        r = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True)
        if r.returncode != 0:
            self.skipTest("not a git checkout: the tracked tree cannot be listed")
        files = [ROOT / f for f in r.stdout.decode().split("\0") if f]
        files = [f for f in files if f.is_file() and not f.is_symlink()]
        folders = {q for f in files for q in f.relative_to(ROOT).parents}  # '.' included, as du counts it
        total = sum(f.stat().st_size for f in files) + 4096 * len(folders)
        self.assertLess(total, 62 * 2**20, f"the tracked tree is {total / 2**20:.1f} MiB, near the device tool's 64: "
                        "gzip or prune results/*/history/ (its README says what each entry is)")

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
