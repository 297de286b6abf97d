"""export_csv.py: one tidy row per case."""
import csv
import io
import subprocess
import sys
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
DATA = Path(__file__).resolve().parent / "data"

COLUMNS = ["op", "impl", "dtype", "workload", "rows", "hidden", "batch", "heads_q", "heads_kv",
           "head_dim", "ffn", "q_len", "kv_len", "causal", "page_size", "lengths", "kv_cache", "mode", "median_us", "gbps",
           "tflops",
           "sol_pct", "err", "splits", "sm_mhz", "repetitions", "error"]


class ExportCsv(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        out = subprocess.run([sys.executable, str(SCRIPTS / "export_csv.py"),
                              str(DATA / "rmsnorm_gb171.json"), str(DATA / "attention_gb183.json"),
                              "-o", "-"], capture_output=True, text=True, check=True)
        reader = csv.DictReader(io.StringIO(out.stdout))
        cls.columns, cls.rows = reader.fieldnames, list(reader)

    def row(self, **match):
        return next(r for r in self.rows if all(r[k] == v for k, v in match.items()))

    def test_columns_and_one_row_per_case(self):
        self.assertEqual(self.columns, COLUMNS)
        self.assertEqual(len(self.rows), 15)

    def test_rmsnorm_row(self):
        r = self.row(impl="vectorized", rows="4096", hidden="4096")
        self.assertEqual((r["op"], r["dtype"], r["workload"], r["mode"]),
                         ("rmsnorm", "bf16", "", "cold"))
        self.assertEqual([r[k] for k in ("batch", "heads_q", "q_len", "causal")], [""] * 4)
        self.assertAlmostEqual(float(r["median_us"]), 22.4567, places=3)
        self.assertGreater(float(r["gbps"]), 2000)
        self.assertEqual((r["repetitions"], r["error"]), ("5", ""))

    def test_attention_row(self):
        r = self.row(impl="tiled_flash")
        self.assertEqual([r[k] for k in ("workload", "batch", "heads_q", "heads_kv", "head_dim",
                                         "q_len", "kv_len", "causal", "rows")],
                         ["prefill", "1", "32", "8", "128", "1024", "1024", "true", ""])
        self.assertGreater(float(r["tflops"]), 100)

    def test_failed_and_skipped_rows(self):
        failed = self.row(impl="block_reduce", rows="4096")
        self.assertIn("verification failed", failed["error"])
        self.assertEqual(failed["median_us"], "")
        self.assertTrue(self.row(impl="manual")["error"].startswith("skipped:"))

    def test_bad_input_is_exit_2(self):
        out = subprocess.run([sys.executable, str(SCRIPTS / "export_csv.py"),
                              str(DATA / "missing.json"), "-o", "-"], capture_output=True,
                             text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("missing.json", out.stderr)

if __name__ == "__main__":
    unittest.main()
