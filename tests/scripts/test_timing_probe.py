"""timing_probe.py's checks that need no GPU: its argument grammar, and bad arguments are exit 2 with
a message naming the bad value (before PyTorch is imported)."""
import re
import subprocess
import sys
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
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

    def test_ahead_loop_keeps_the_host_n_iterations_ahead(self):
        """ahead_loop: do_bench's loop (flush, start event, call, end event), the host waiting for
        iteration i - N's end event before enqueuing iteration i; the first 10% of iterations are not
        counted; returns the events' median and the host's median time an iteration."""
        import types
        log, clock = [], [0]

        class Event:
            def __init__(self, **kw):
                self.t = None

            def record(self):
                clock[0] += 1
                self.t = clock[0]
                log.append("event")

            def synchronize(self):
                log.append(("wait", self.t))

            def elapsed_time(self, other):
                return 1e-3 * 2.5 * (other.t - self.t)  # ms: each event pair reads 2.5 us

        torch = types.SimpleNamespace(cuda=types.SimpleNamespace(Event=Event, synchronize=lambda: log.append("sync")))
        us, host_us = timing_probe.ahead_loop(torch, lambda: log.append("call"), lambda: log.append("zero"),
                                              ahead=2, iters=5)
        self.assertAlmostEqual(us, 2.5)
        self.assertGreaterEqual(host_us, 0.0)
        it = ["zero", "event", "call", "event"]
        # Iteration i >= 2 first waits for iteration i - 2's end event (recorded as event 2 (i - 2) + 2).
        expected = ["sync"] + it + it + [("wait", 2)] + it + [("wait", 4)] + it + [("wait", 6)] + it + [("wait", 10)]
        self.assertEqual(log, expected)

    def test_every_call_is_described(self):
        for c in timing_probe.CALLS:
            self.assertIn(f"`{c}`", timing_probe.__doc__)

    def test_vectorized_without_the_probe_library_exits_2(self):
        r = probe("--calls", "vectorized", "--lib", "/nonexistent/libsolbench_probe.so")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("needs libsolbench_probe.so: /nonexistent/libsolbench_probe.so", r.stderr)

    def test_suite_call_raises_the_librarys_reason(self):
        """suite_call passes the tensors' pointers and the current stream, and a non-zero return from the
        library is an exception carrying the library's message (never a silent skip)."""
        import types
        seen = []

        def lib(variant, rows, hidden, eps, dtype, x, w, y, stream, err, err_len):
            seen.append((variant, rows, hidden, eps, dtype, x, w, y, stream.value))
            err.value = b"rmsnorm: x is null"
            return 2

        def tensor(ptr, shape=None):
            return types.SimpleNamespace(shape=shape, data_ptr=lambda: ptr)
        torch = types.SimpleNamespace(cuda=types.SimpleNamespace(
            current_stream=lambda: types.SimpleNamespace(cuda_stream=77)))
        call = timing_probe.suite_call(torch, lib, "vectorized", tensor(16, (4, 8)), tensor(32), tensor(48))
        with self.assertRaisesRegex(RuntimeError, r"solbench_rmsnorm\(vectorized\): rmsnorm: x is null"):
            call()
        self.assertEqual(seen, [(b"vectorized", 4, 8, 1e-6, b"bf16", 16, 32, 48, 77)])

    def test_bad_arguments_exit_2(self):
        for args, what in ((["--shapes", "2x3x4"], "'2x3x4'"), (["--protocols", "foo"], "foo"),
                           (["--calls", "eager"], "eager"), (["--hold-us", "-1"], "--hold-us must be from 0 to 1000")):
            r = probe(*args)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn(what, r.stderr)


if __name__ == "__main__":
    unittest.main()
