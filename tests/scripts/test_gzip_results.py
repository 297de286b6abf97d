"""Results stored compressed (results/<gpu>/latest.json.xz and baseline.json.xz, or .json.gz) load exactly as
the plain JSON does, through sbresults.read_text; a corrupt .xz or .gz is an error that names the file; and
`sbresults.py merge OUT.json.xz` writes xz."""
import dataclasses
import gzip
import json
import lzma
import re
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


class GzippedResults(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="sbtest_gz_"))
        self.addCleanup(shutil.rmtree, self.tmp)
        doc = gbfake.run([gbfake.floor("cold"), gbfake.rmsnorm("vectorized", "bf16", 4096, 4096, "cold"),
                          gbfake.attention("decode_splitk", "bf16", "decode", 1, 32, 8, 128, 1, 4096, False,
                                           "cold")], seed=3)
        self.plain = gbfake.write(self.tmp / "run.json", doc)
        self.gz = self.tmp / "run.json.gz"
        self.gz.write_bytes(gzip.compress(Path(self.plain).read_bytes(), mtime=0))

    def cases(self, path):
        run = sbresults.load(path)
        return run.context, [dataclasses.replace(c, source="") for c in run.cases]

    def test_plain_and_gzipped_give_the_same_object(self):
        self.assertEqual(json.loads(sbresults.read_text(self.gz)), json.loads(sbresults.read_text(self.plain)))
        context, cases = self.cases(self.gz)
        self.assertEqual(len(cases), 3)
        self.assertEqual((context, cases), self.cases(self.plain))
        self.assertEqual(sbresults.load(self.gz).cases[0].source, str(self.gz))

    def test_regress_cli_reads_gzip(self):
        r = subprocess.run([sys.executable, str(SCRIPTS / "regress.py"), str(self.gz), str(self.plain)],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(r.stdout.rstrip().endswith("PASS"), r.stdout)

    def assertGzipError(self, path):
        with self.assertRaises(sbresults.ResultsError) as cm:
            sbresults.load(path)
        self.assertIn(str(path), str(cm.exception))
        self.assertIn("not a valid gzip file", str(cm.exception))

    def test_corrupt_gzip_names_the_file(self):
        data = bytearray(self.gz.read_bytes())
        for i in range(len(data) // 3, len(data) // 3 + 64):
            data[i] ^= 0xFF
        bad = self.tmp / "corrupt.json.gz"
        bad.write_bytes(bytes(data))
        self.assertGzipError(bad)

    def test_truncated_gzip_names_the_file(self):
        bad = self.tmp / "cut.json.gz"
        bad.write_bytes(self.gz.read_bytes()[: self.gz.stat().st_size // 2])
        self.assertGzipError(bad)

    def test_plain_json_named_gz_names_the_file(self):
        bad = self.tmp / "notgz.json.gz"
        shutil.copy(self.plain, bad)
        self.assertGzipError(bad)

    def test_gzipped_invalid_json_keeps_the_json_error(self):
        bad = self.tmp / "half.json.gz"
        text = Path(self.plain).read_bytes()
        bad.write_bytes(gzip.compress(text[: len(text) // 2], mtime=0))
        with self.assertRaisesRegex(sbresults.ResultsError, re.escape(f"{bad}: not valid JSON")):
            sbresults.load(bad)

    def test_corrupt_gzip_is_exit_2_with_the_name(self):
        bad = self.tmp / "corrupt.json.gz"
        bad.write_bytes(b"\x1f\x8b" + b"\x00" * 40)
        r = subprocess.run([sys.executable, str(SCRIPTS / "regress.py"), str(bad), str(self.plain)],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(str(bad), r.stderr)

    def test_missing_gzip_names_the_file(self):
        with self.assertRaisesRegex(sbresults.ResultsError, "absent.json.gz: no such file"):
            sbresults.load(self.tmp / "absent.json.gz")


class XzResults(unittest.TestCase):
    """The committed runs are stored as xz (a quarter smaller than gzip -9)."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="sbtest_xz_"))
        self.addCleanup(shutil.rmtree, self.tmp)
        doc = gbfake.run([gbfake.floor("cold"), gbfake.rmsnorm("vectorized", "bf16", 4096, 4096, "cold")], seed=5)
        self.plain = gbfake.write(self.tmp / "run.json", doc)
        self.xz = self.tmp / "run.json.xz"
        self.xz.write_bytes(lzma.compress(Path(self.plain).read_bytes(), preset=9))

    def test_plain_and_xz_give_the_same_object(self):
        self.assertEqual(json.loads(sbresults.read_text(self.xz)), json.loads(sbresults.read_text(self.plain)))
        self.assertEqual(len(sbresults.load(self.xz).cases), 2)
        r = subprocess.run([sys.executable, str(SCRIPTS / "regress.py"), str(self.xz), str(self.plain)],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(r.stdout.rstrip().endswith("PASS"), r.stdout)

    def test_corrupt_truncated_or_plain_xz_names_the_file(self):
        data = self.xz.read_bytes()
        flipped = bytearray(data)
        for i in range(len(data) // 3, len(data) // 3 + 64):
            flipped[i] ^= 0xFF
        for name, content in (("corrupt", bytes(flipped)), ("cut", data[: len(data) // 2]),
                              ("plain", Path(self.plain).read_bytes())):
            with self.subTest(name):
                bad = self.tmp / f"{name}.json.xz"
                bad.write_bytes(content)
                with self.assertRaises(sbresults.ResultsError) as cm:
                    sbresults.load(bad)
                self.assertIn(f"{bad}: not a valid xz file", str(cm.exception))

    def test_merge_writes_xz_when_the_name_says_so(self):
        part = gbfake.write(self.tmp / "bench_attention.json", gbfake.run(
            [gbfake.attention("decode_splitk", "bf16", "decode", 1, 32, 8, 128, 1, 4096, False, "cold")], seed=6))
        for name, opener in (("latest.json.xz", lzma.open), ("latest.json.gz", gzip.open), ("latest.json", open)):
            with self.subTest(name):
                out = self.tmp / name
                r = subprocess.run([sys.executable, str(SCRIPTS / "sbresults.py"), "merge", str(out), str(self.plain),
                                    str(part)], capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                with opener(out, "rt", encoding="utf-8") as f:
                    self.assertEqual(len(json.load(f)["benchmarks"]), len(json.loads(Path(self.plain).read_text())[
                        "benchmarks"]) + len(json.loads(Path(part).read_text())["benchmarks"]))
                self.assertEqual(len(sbresults.load(out).cases), 3)
                self.assertEqual(sorted(p.name for p in self.tmp.glob(".*")), [])  # no temporary file left

    def test_merge_refuses_a_part_from_another_gpu_and_keeps_the_old_file(self):
        other = gbfake.write(self.tmp / "bench_attention.json", gbfake.run(
            [gbfake.attention("decode_splitk", "bf16", "decode", 1, 32, 8, 128, 1, 4096, False, "cold")], seed=6,
            ctx=gbfake.context(gpu_name="NVIDIA H100 80GB HBM3")))
        out = self.tmp / "latest.json.xz"
        out.write_bytes(self.xz.read_bytes())
        r = subprocess.run([sys.executable, str(SCRIPTS / "sbresults.py"), "merge", str(out), str(self.plain),
                            str(other)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("gpu_name 'NVIDIA H100 80GB HBM3' differs from 'NVIDIA H200'", r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertEqual(out.read_bytes(), self.xz.read_bytes())


if __name__ == "__main__":
    unittest.main()
