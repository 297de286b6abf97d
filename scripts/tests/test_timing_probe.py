"""timing_probe.py's checks that need no GPU: its argument grammar, and bad arguments are exit 2 with
a message naming the bad value (before PyTorch is imported)."""
import re
import subprocess
import sys
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))
import timing_probe  # noqa: E402


def probe(*args):
    return subprocess.run([sys.executable, str(SCRIPTS / "timing_probe.py"), *args], capture_output=True, text=True)


class TimingProbe(unittest.TestCase):
    def test_shapes_parse(self):
        self.assertEqual(timing_probe.parse_shapes("256x4096, 2048x2048"), [(256, 4096), (2048, 2048)])

    def test_bad_shapes_name_the_entry(self):
        for bad in ("2x3x4", "0x4096", "axb", "4096", ""):
            with self.assertRaises(ValueError) as e:
                timing_probe.parse_shapes(bad)
            self.assertIn(f"'{bad.strip()}'", str(e.exception))

    def test_lists_accept_only_known_names(self):
        self.assertEqual(timing_probe.parse_list("do_bench,harness_b4", timing_probe.PROTOCOLS, "--protocols"),
                         ["do_bench", "harness_b4"])
        with self.assertRaises(ValueError) as e:
            timing_probe.parse_list("do_bench,harness_b5", timing_probe.PROTOCOLS, "--protocols")
        self.assertIn("harness_b5", str(e.exception))
        with self.assertRaises(ValueError):
            timing_probe.parse_list(",", timing_probe.CALLS, "--calls")

    def test_every_protocol_is_described(self):
        for p in timing_probe.PROTOCOLS:  # harness_b1 ... and ahead_16 ... are described once, as harness_bN, ahead_N
            generic = re.sub(r"^(harness_b|ahead_)\d+$", lambda m: m.group(1) + "N", p)
            self.assertIn(generic, timing_probe.__doc__)

    def test_bad_arguments_exit_2(self):
        for args, what in ((["--shapes", "2x3x4"], "'2x3x4'"), (["--protocols", "foo"], "foo"),
                           (["--calls", "eager"], "eager")):
            r = probe(*args)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn(what, r.stderr)


if __name__ == "__main__":
    unittest.main()
