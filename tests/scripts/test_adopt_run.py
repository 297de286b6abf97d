"""adopt_run.py: the current run filed in history/, the new one installed, and every refusal changes nothing."""
import gzip
import io
import json
import lzma
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
import adopt_run  # noqa: E402
import gbfake  # noqa: E402

CASES = gbfake.rmsnorm_grid() + [gbfake.floor("cold")]
OLD, NEW = "2026-11-30_30b06c4f8421", "2026-12-01_0123456789ab"


class AdoptRun(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        self.res = self.tmp / "results" / "h200"
        (self.res / "history").mkdir(parents=True)
        old = gbfake.write(self.res / f"{OLD}.json", gbfake.run(CASES, seed=1))
        for name in ("latest.json", "baseline.json"):
            shutil.copyfile(old, self.res / name)
        (self.res / f"env_{OLD}.txt").write_text("old env\n")
        (self.res / "crosscheck_latest.json").write_text(json.dumps({"rows": ["old"]}))
        out = self.tmp / "out"
        out.mkdir()
        self.new = gbfake.write(out / f"{NEW}.json", gbfake.run(CASES, seed=2, ctx=dict(gbfake.context("1.8.3"),
                                                                                     gpu_uuid="GPU-new")))
        self.env = out / "env.txt"
        self.env.write_text("new env\n")
        self.cross = out / "crosscheck.json"
        self.cross.write_text(json.dumps({"rows": ["new"]}))

    def adopt(self, *extra, new=None):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = adopt_run.main([str(self.res), str(new or self.new), "--env", str(self.env),
                                   "--crosscheck", str(self.cross), *extra])
        return code, out.getvalue(), err.getvalue()

    def snapshot(self):
        return {str(p.relative_to(self.tmp)): p.read_bytes() for p in sorted(self.tmp.rglob("*")) if p.is_file()}

    def test_files_the_current_run_and_installs_the_new_one(self):
        old_bytes = (self.res / f"{OLD}.json").read_bytes()
        code, out, err = self.adopt()
        self.assertEqual(code, 0, err)
        hist = self.res / "history"
        self.assertEqual(lzma.decompress((hist / f"{OLD}.json.xz").read_bytes()), old_bytes)
        self.assertEqual((hist / f"env_{OLD}.txt").read_text(), "old env\n")
        self.assertEqual(json.loads(lzma.decompress((hist / f"{OLD}_crosscheck.json.xz").read_bytes())),
                         {"rows": ["old"]})
        report = gzip.decompress((hist / "2026-12-01_regress_0123456789ab_vs_30b06c4f8421.txt.gz").read_bytes())
        self.assertIn(b" compared: ", report)
        for name in (f"{NEW}.json", "latest.json", "baseline.json"):
            self.assertEqual((self.res / name).read_bytes(), self.new.read_bytes(), name)
        for name in ("latest.json", "baseline.json"):  # links, not copies: one copy of the run in the tree
            self.assertTrue((self.res / name).is_symlink(), name)
            self.assertEqual(str((self.res / name).readlink()), f"{NEW}.json", name)
        self.assertEqual((self.res / f"env_{NEW}.txt").read_text(), "new env\n")
        self.assertEqual(json.loads((self.res / "crosscheck_latest.json").read_text()), {"rows": ["new"]})
        self.assertFalse((self.res / f"{OLD}.json").exists())
        self.assertFalse((self.res / f"env_{OLD}.txt").exists())
        self.assertIn("history/README.md", out)
        # The new folder is consistent again: a second adoption finds exactly one current run.
        self.assertEqual(adopt_run.current_stamp(self.res), NEW)

    def test_dry_run_changes_nothing(self):
        before = self.snapshot()
        code, out, _ = self.adopt("--dry-run")
        self.assertEqual(code, 0)
        self.assertIn(f"{OLD}.json -> history/{OLD}.json.xz (xz)", out)
        self.assertEqual(self.snapshot(), before)

    def test_refusals_change_nothing(self):
        def bad_name():
            return Path(shutil.copyfile(self.new, self.new.with_name("run.json")))

        def history_taken():
            (self.res / "history" / f"{OLD}.json.xz").write_bytes(b"x")

        cases = {  # the reason's words -> a change that makes the adoption invalid, maybe the new file to give
            "named <date>_<commit12>.json": bad_name,
            "exists: refusing to overwrite history": history_taken,
            "is not a copy of": lambda: (self.res / "latest.json").write_text("{}"),
            "exactly one stamped run": lambda: shutil.copyfile(self.new, self.res / "2026-11-29_aaaaaaaaaaaa.json") and None,
            "already the current run": lambda: self.res / f"{OLD}.json",
        }
        for why, breaks in cases.items():
            with self.subTest(why):
                self.setUp()
                new = breaks()
                before = self.snapshot()
                code, _, err = self.adopt(new=new if isinstance(new, Path) else None)
                self.assertEqual(code, 2, err)
                self.assertIn(why, err)
                self.assertEqual(self.snapshot(), before)

    def test_the_layer_timeline_goes_with_its_run(self):
        (self.res / "layer_timeline_latest.json").write_text(json.dumps({"env": {"gpu_uuid": "GPU-old"}}))
        timeline = self.tmp / "out" / "layer_timeline.json"
        timeline.write_text(json.dumps({"env": {"gpu_uuid": "GPU-other"}, "shapes": {}}))
        before = self.snapshot()
        code, _, err = self.adopt("--timeline", str(timeline))
        self.assertEqual(code, 2, err)
        self.assertIn("--timeline: measured on GPU-other, the run on GPU-new", err)
        self.assertEqual(self.snapshot(), before)
        timeline.write_text(json.dumps({"env": {"gpu_uuid": "GPU-new"}, "shapes": {}}))
        code, out, err = self.adopt("--timeline", str(timeline))
        self.assertEqual(code, 0, err)
        self.assertEqual(json.loads((self.res / "layer_timeline_latest.json").read_text())["env"]["gpu_uuid"], "GPU-new")
        self.assertEqual(json.loads(lzma.decompress((self.res / "history" / f"{OLD}_layer_timeline.json.xz").read_bytes())),
                         {"env": {"gpu_uuid": "GPU-old"}})


if __name__ == "__main__":
    unittest.main()
