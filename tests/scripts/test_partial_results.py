"""A bench run cut short: its partial results file (<--benchmark_out>.partial.jsonl) loads in sbresults, marked
incomplete, with the medians of the repetitions it finished; report.py, export_csv.py and regress.py read it."""
import csv
import importlib.util
import io
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
import gbfake  # noqa: E402
import sbresults  # noqa: E402

CASES = gbfake.rmsnorm_grid() + [gbfake.floor("cold")]
SKIPPED = "rmsnorm/naive/bf16/t1_h4096/cold"


def script(name, *args):
    r = subprocess.run([sys.executable, str(SCRIPTS / name), *map(str, args)], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


class PartialResults(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="sbpartial_"))
        self.addCleanup(shutil.rmtree, self.tmp)
        self.doc = gbfake.run(CASES, seed=3, errors={SKIPPED: "skipped: needs sm_90a"})
        self.full = gbfake.write(self.tmp / "full.json", self.doc)
        self.partial = self.tmp / "bench_rmsnorm.json.partial.jsonl"
        self.partial.write_text(gbfake.partial(self.doc))

    def test_medians_of_the_repetitions_as_a_full_file_gives_them_and_marked_incomplete(self):
        full, part = sbresults.load(self.full), sbresults.load(self.partial)
        self.assertFalse(full.incomplete)
        self.assertTrue(part.incomplete)
        self.assertEqual(part.context["incomplete"], "true")
        self.assertEqual(part.context["gpu_name"], full.context["gpu_name"])
        self.assertEqual([c.name for c in part.cases], [c.name for c in full.cases])
        for a, b in zip(full.cases, part.cases):
            self.assertEqual((b.error, b.skipped, b.repetitions), (a.error, a.skipped, a.repetitions))
            if a.ok:
                self.assertAlmostEqual(b.median_us, a.median_us, places=9)
                self.assertEqual(b.counters.keys(), a.counters.keys())
                for key in a.counters:
                    self.assertAlmostEqual(b.counters[key], a.counters[key], places=6)

    def test_a_last_line_cut_short_is_left_out(self):
        text = gbfake.partial(self.doc)
        self.partial.write_text(text[:text.rstrip("\n").rfind("\n") + 40])  # 40 characters of the last row
        last = sbresults.load(self.partial).cases[-1]
        self.assertEqual((last.name, last.repetitions), ("floor/empty_kernel/cold", 4))

    def test_a_bad_line_before_the_last_or_no_context_is_an_error_naming_the_file(self):
        lines = gbfake.partial(self.doc).splitlines(keepends=True)
        for bad, fragment in ((lines[:3] + ["{oops\n"] + lines[3:], "line 4 is not valid JSON"),
                              (lines[1:], "the first line is not"), ([], "the first line is not")):
            self.partial.write_text("".join(bad))
            with self.assertRaises(sbresults.ResultsError) as cm:
                sbresults.load(self.partial)
            self.assertIn(str(self.partial), str(cm.exception))
            self.assertIn(fragment, str(cm.exception))

    def test_it_stands_in_for_a_truncated_out_file_and_is_found_in_a_directory(self):
        out = self.tmp / "bench_rmsnorm.json"
        out.write_text(json.dumps(self.doc)[:3000])  # what Google Benchmark had written when the run stopped
        self.assertTrue(sbresults.load(out).incomplete)
        self.assertEqual(len(sbresults.load(out).cases), len(CASES))
        out.unlink()
        run_dir = self.tmp / "logs"
        run_dir.mkdir()
        attention = gbfake.run(gbfake.attention_set(), seed=4)
        gbfake.write(run_dir / "bench_attention.json", attention)  # a complete binary
        shutil.move(self.partial, run_dir / self.partial.name)     # and one cut short
        run = sbresults.load(run_dir)
        self.assertTrue(run.incomplete)
        self.assertEqual(len(run.cases), len(CASES) + len(gbfake.attention_set()))
        merged = self.tmp / "latest.json"
        self.assertEqual(script("sbresults.py", "merge", merged, run_dir / "bench_attention.json",
                                run_dir / self.partial.name)[0], 0)
        self.assertTrue(sbresults.load(merged).incomplete)

    def test_regress_warns_and_fails_on_the_missing_unless_allowed(self):
        cut = self.tmp / "cut.json.partial.jsonl"
        cut.write_text("".join(gbfake.partial(self.doc).splitlines(keepends=True)[:21]))  # 20 repetitions: 4 cases
        rc, out, _ = script("regress.py", self.full, cut)
        self.assertEqual(rc, 1, out)
        self.assertIn("WARNING: the run is incomplete", out)
        self.assertIn(f"missing of the baseline's {len(CASES)} cases; the run holds 4", out)
        rc, out, _ = script("regress.py", self.full, cut, "--allow-missing")
        self.assertEqual(rc, 0, out)
        self.assertIn("WARNING: the run is incomplete", out)

    def test_export_csv_reads_it(self):
        rc, out, err = script("export_csv.py", self.partial, "-o", "-")
        self.assertEqual(rc, 0, err)
        rows = list(csv.DictReader(io.StringIO(out)))
        self.assertEqual(len(rows), len(CASES))
        self.assertEqual(next(r for r in rows if r["impl"] == "naive" and r["rows"] == "1")["error"],
                         "skipped: needs sm_90a")

    @unittest.skipUnless(importlib.util.find_spec("matplotlib"), "matplotlib is not installed: report not tested")
    def test_report_reads_it_and_says_the_run_is_incomplete(self):
        results = self.tmp / "h200"
        results.mkdir()
        rc, out, err = script("report.py", results, "--run", self.partial, "--no-plots")
        self.assertEqual(rc, 0, err)
        self.assertIn("The run is incomplete", (results / "REPORT.md").read_text())


if __name__ == "__main__":
    unittest.main()
