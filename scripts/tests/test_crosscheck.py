"""crosscheck_torch.py's checks that need no GPU: bad input and runs without PyTorch baselines are
clear errors (exit 2), never a pass."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"


def crosscheck(*args):
    return subprocess.run([sys.executable, str(SCRIPTS / "crosscheck_torch.py"), *map(str, args)],
                          capture_output=True, text=True)


class Crosscheck(unittest.TestCase):
    def test_malformed_json_is_exit_2(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write('{"context": {}, "benchmarks": [')
            f.flush()
            r = crosscheck(f.name)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not valid JSON", r.stderr)

    def test_run_without_torch_baselines_is_exit_2(self):
        r = crosscheck(DATA / "attention_gb183.json")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("no cold PyTorch baseline cases", r.stderr)


if __name__ == "__main__":
    unittest.main()
