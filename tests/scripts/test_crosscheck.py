"""crosscheck_torch.py's checks that need no GPU: bad input and runs without PyTorch baselines are
clear errors (exit 2), never a pass."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(Path(__file__).resolve().parent))
import gbfake  # noqa: E402
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
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(gbfake.run([gbfake.floor("cold"), gbfake.rmsnorm("vectorized", "bf16", 4096, 4096, "cold")]), f)
            f.flush()
            r = crosscheck(f.name)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("no cold PyTorch baseline cases", r.stderr)

    def test_bad_filter_is_exit_2(self):
        r = crosscheck(DATA / "rmsnorm_gb171.json", "--filter", "t1_h(")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("--filter: not a regular expression", r.stderr)

    def test_a_filter_that_keeps_no_baseline_is_exit_2(self):
        r = crosscheck(DATA / "rmsnorm_gb171.json", "--filter", "no_such_case")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("no cold PyTorch baseline cases", r.stderr)

    def test_anchors_narrow_the_attention_cases_to_their_shapes(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump({"anchors": [{"op": "attention", "impl": "torch_sdpa_flash", "dtype": "bf16",
                                    "shape": "b4_hq32_hkv32_d128_q4096_kv4096", "mode": "cold"}]}, f)
            f.flush()
            r = crosscheck(DATA / "attention_gb183.json", "--anchors", f.name)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("no cold PyTorch baseline cases", r.stderr)

    def test_malformed_anchors_are_exit_2(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write('{"anchors": [{"op": "attention"}]}')
            f.flush()
            r = crosscheck(DATA / "attention_gb183.json", "--anchors", f.name)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("--anchors", r.stderr)

    def test_the_committed_anchors_keep_exactly_the_anchor_attention_cases(self):
        from types import SimpleNamespace as Case
        sys.path.insert(0, str(SCRIPTS))
        import crosscheck_torch
        keep = crosscheck_torch.anchor_filter(SCRIPTS.parent / "results" / "h200" / "anchors.json")
        self.assertTrue(keep(Case(op="attention", dtype="bf16", shape_label="b64_hq32_hkv8_d128_q1_kv16384")))
        self.assertTrue(keep(Case(op="attention", dtype="bf16", shape_label="b4_hq32_hkv32_d128_q4096_kv4096")))
        self.assertFalse(keep(Case(op="attention", dtype="fp16", shape_label="b64_hq32_hkv8_d128_q1_kv16384")))
        self.assertFalse(keep(Case(op="attention", dtype="bf16", shape_label="b64_hq32_hkv8_d128_q1_kv8192")))
        self.assertTrue(keep(Case(op="rmsnorm", dtype="fp32", shape_label="t3_h7")))

    def test_without_pytorch_it_says_so(self):
        try:
            import torch  # noqa: F401
            self.skipTest("PyTorch is installed here")
        except ImportError:
            pass
        r = crosscheck(DATA / "rmsnorm_gb171.json")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("needs PyTorch and triton", r.stderr)


class HeldFlush(unittest.TestCase):
    """The hold added to do_bench's flush, with stand-ins for torch and triton (no GPU needed)."""

    def setUp(self):
        import types
        sys.path.insert(0, str(SCRIPTS))
        import crosscheck_torch
        self.xc, self.calls = crosscheck_torch, []

        class Driver:
            def clear_cache(drv, cache):
                self.calls.append(("flush", cache))

        self.driver = Driver()
        triton = types.ModuleType("triton")
        triton.__version__ = "0.test"
        triton.runtime = types.SimpleNamespace(driver=types.SimpleNamespace(active=self.driver))
        self.saved = sys.modules.get("triton")
        sys.modules["triton"] = triton
        self.torch = types.SimpleNamespace(cuda=types.SimpleNamespace(_sleep=lambda c: self.calls.append(("sleep", c))))

    def tearDown(self):
        if self.saved is None:
            sys.modules.pop("triton", None)
        else:
            sys.modules["triton"] = self.saved

    def test_the_flush_is_followed_by_the_spin_and_restored_after(self):
        with self.xc.held_flush(self.torch, 12345):
            self.driver.clear_cache("cache")
        self.assertEqual(self.calls, [("flush", "cache"), ("sleep", 12345)])
        self.driver.clear_cache("again")  # the driver's own flush again, no spin
        self.assertEqual(self.calls[-1], ("flush", "again"))
        self.assertEqual(len(self.calls), 3)

    def test_an_l2_sized_flush_zeroes_only_the_start_of_the_buffer(self):
        calls = self.calls

        class Cache:
            def element_size(self):
                return 4

            def __getitem__(self, sl):
                calls.append(("slice", sl.start, sl.stop))
                return type("Part", (), {"zero_": lambda part: calls.append(("zero",))})()

        with self.xc.held_flush(self.torch, 7, flush_bytes=60 * 2**20):
            self.driver.clear_cache(Cache())
        self.assertEqual(self.calls, [("slice", None, 15 * 2**20), ("zero",), ("sleep", 7)])

    def test_restored_when_the_body_raises(self):
        with self.assertRaises(ValueError):
            with self.xc.held_flush(self.torch, 1):
                raise ValueError("boom")
        self.driver.clear_cache("x")
        self.assertEqual(self.calls, [("flush", "x")])

    def test_a_triton_without_clear_cache_is_an_error(self):
        sys.modules["triton"].runtime.driver.active = object()
        with self.assertRaises(RuntimeError) as e:
            with self.xc.held_flush(self.torch, 1):
                pass
        self.assertIn("clear_cache", str(e.exception))



class HarnessProtocolFromPython(unittest.TestCase):
    """harness_protocol_us: per launch flush, hold, start event, call, end event; one synchronization a
    batch; the warm-up batch is not counted."""

    def setUp(self):
        sys.path.insert(0, str(SCRIPTS))
        import crosscheck_torch
        self.xc = crosscheck_torch

    @staticmethod
    def stand_in_torch(log, sizes, us_per_pair):
        """A torch whose flush buffer, events and spin record what they do in `log` (buffer sizes in
        `sizes`); an event pair measures us_per_pair microseconds."""
        import types

        class Cache:
            def zero_(self): log.append("zero")

        class Event:
            n = 0

            def __init__(self, **kw):
                Event.n += 1
                self.i = Event.n

            def record(self): log.append("event")
            def synchronize(self): log.append("sync")
            def elapsed_time(self, other): return 1e-3 * us_per_pair * (other.i - self.i)  # ms

        return types.SimpleNamespace(
            int="int32", empty=lambda n, **k: sizes.append(n) or Cache(),
            cuda=types.SimpleNamespace(Event=Event, _sleep=lambda c: log.append(("sleep", c))))

    def test_order_batches_and_median(self):
        log, sizes = [], []
        torch = self.stand_in_torch(log, sizes, 1.0)
        us = self.xc.harness_protocol_us(torch, lambda: log.append("call"), 60 * 2**20, 77, batches=2, batch=3)
        self.assertAlmostEqual(us, 1.0)
        self.assertEqual(sizes, [60 * 2**20 // 4])
        launch = ["zero", ("sleep", 77), "event", "call", "event"]
        self.assertEqual(log, (launch * 3 + ["sync"]) * 3)

    def test_reset_waits_for_the_launch_before_and_precedes_each_flush(self):
        """Protocol v26 from Python: each launch waits for the one before it in its batch (the batch's
        first for the synchronization that ended the batch before), then the reset, then the flush."""
        import types
        log, sizes = [], []
        torch = self.stand_in_torch(log, sizes, 1.0)
        rt = types.SimpleNamespace(cudaCtxResetPersistingL2Cache=lambda: log.append("reset") or 0)
        us = self.xc.harness_protocol_us(torch, lambda: log.append("call"), 60 * 2**20, 77, batches=1, batch=3,
                                         reset=self.xc.persisting_reset(rt))
        self.assertAlmostEqual(us, 1.0)
        launch = ["reset", "zero", ("sleep", 77), "event", "call", "event"]
        batch = launch + ["sync"] + launch + ["sync"] + launch + ["sync"]
        self.assertEqual(log, batch * 2)  # the warm-up batch and the timed one

    def test_persisting_reset_raises_the_cuda_error(self):
        import types
        bad = types.SimpleNamespace(cudaCtxResetPersistingL2Cache=lambda: 801)
        with self.assertRaisesRegex(RuntimeError, "cudaCtxResetPersistingL2Cache failed: error 801"):
            self.xc.persisting_reset(bad)([], 0)

    def test_loop_sync_is_do_benchs_loop_synchronized_each_iteration(self):
        """loop_sync_us: flush, start event, call, end event, synchronization, per iteration; no hold;
        10 warm-up iterations not counted."""
        log, sizes = [], []
        torch = self.stand_in_torch(log, sizes, 2.0)
        us = self.xc.loop_sync_us(torch, lambda: log.append("call"), iters=3)
        self.assertAlmostEqual(us, 2.0)
        self.assertEqual(sizes, [256 * 2**20 // 4])
        self.assertEqual(log, ["zero", "event", "call", "event", "sync"] * 13)


class ComparedFigure(unittest.TestCase):
    """The compared do_bench figure: plain where the call's host time is under its GPU time, else the lower
    of plain and held (each errs only upward there)."""

    def setUp(self):
        sys.path.insert(0, str(SCRIPTS))
        import crosscheck_torch
        self.xc = crosscheck_torch

    def test_plain_timing_the_host_gives_way_to_held(self):
        # cuDNN decode at b1 KV 4096 on the H200 (8d53e09 run): plain 51.82, held 16.58 us
        self.assertEqual(self.xc.compared_figure(51.82, 16.58), (16.58, "held"))

    def test_a_held_figure_above_plain_gives_way_to_plain(self):
        # at::rms_norm 256 x 4096, same run: plain 10.53, held 11.17 us
        self.assertEqual(self.xc.compared_figure(10.53, 11.17), (10.53, "plain"))

    def test_without_a_held_figure_plain_is_compared(self):
        self.assertEqual(self.xc.compared_figure(10.0, None), (10.0, "plain"))

    def test_a_call_whose_host_time_is_under_its_gpu_time_compares_plain(self):
        # SDPA cuDNN prefill b4 4k causal (2dde009 run): plain 1,034.27, held 937.76 us (the spin lowers the
        # duty cycle of a power-limited launch), host 62 us, harness 1,001.42 us
        self.assertEqual(self.xc.compared_figure(1034.27, 937.76, 62.0, 1001.42), (1034.27, "plain"))

    def test_a_call_whose_host_time_exceeds_its_gpu_time_takes_the_lower(self):
        # cuDNN decode b1 KV 4096: host ~25 us over a ~17 us launch: plain times the host
        self.assertEqual(self.xc.compared_figure(41.47, 17.86, 25.0, 16.88), (17.86, "held"))
        self.assertEqual(self.xc.compared_figure(10.53, 11.17, 18.0, 10.2), (10.53, "plain"))


class Diagnostics(unittest.TestCase):
    def setUp(self):
        sys.path.insert(0, str(SCRIPTS))
        import crosscheck_torch
        self.xc = crosscheck_torch

    def test_short_launches_always_get_them(self):
        self.assertTrue(self.xc.wants_diagnostics(10.0, 1980.0, 1980.0))
        self.assertTrue(self.xc.wants_diagnostics(99.9, None, None))

    def test_a_longer_launch_gets_them_only_at_a_clock_gap(self):
        # SDPA flash decode b64 KV 16384 on the H200: harness 1,547 us at 1,949 MHz, do_bench at 1,830.
        self.assertTrue(self.xc.wants_diagnostics(1547.0, 1949.0, 1830.0))
        self.assertFalse(self.xc.wants_diagnostics(1547.0, 1949.0, 1880.0))  # 3.5% lower: no
        self.assertFalse(self.xc.wants_diagnostics(1547.0, 1949.0, 1990.0))
        self.assertFalse(self.xc.wants_diagnostics(1547.0, None, 1830.0))   # no clock recorded: no
        self.assertFalse(self.xc.wants_diagnostics(1547.0, 1949.0, None))

    def test_not_past_the_longest_launch(self):
        self.assertFalse(self.xc.wants_diagnostics(30000.0, 1980.0, 1700.0))
        self.assertTrue(self.xc.wants_diagnostics(10000.0, 1980.0, 1700.0))


class MainWithStandIns(unittest.TestCase):
    """main() end to end over a real run file, with stand-ins for torch and triton that record what is
    launched: every row gets plain and held do_bench, the hold reaches the flush, the L2-sized flush
    runs for short cases, and the JSON carries every column the report reads."""

    def test_rows_carry_plain_held_and_l2_figures(self):
        import contextlib
        import io
        import types
        log = []

        class Anything:  # a tensor: arithmetic and views give itself
            def __mul__(self, o): return self
            __add__ = __rmul__ = __radd__ = __mul__
            def permute(self, *a): return self

        class Cache:
            def element_size(self): return 4
            def __getitem__(self, sl): return self
            def zero_(self): log.append("zero")

        class Event:
            def __init__(self, **kw): pass
            def record(self): pass
            def synchronize(self): pass
            def elapsed_time(self, other): return 0.5  # ms: 1e6 cycles at 2 GHz

        class Driver:
            def clear_cache(self, cache): log.append("flush256")

        driver = Driver()

        def do_bench(fn, warmup, rep, return_mode):
            driver.clear_cache(Cache())
            fn()
            return 0.0102  # ms

        cuda = types.SimpleNamespace(
            Stream=lambda: None, stream=lambda s: contextlib.nullcontext(), Event=Event,
            _sleep=lambda c: log.append(("sleep", c)), synchronize=lambda: None, current_device=lambda: 0,
            get_device_properties=lambda i: types.SimpleNamespace(L2_cache_size=60 * 2**20),
            get_device_name=lambda: "Stand-in GPU")
        torch = types.ModuleType("torch")
        torch.__version__, torch.cuda, torch.int = "stand-in", cuda, "int32"
        torch.float32 = torch.float16 = torch.bfloat16 = "dtype"
        torch.randn = lambda *a, **k: Anything()
        torch.empty = lambda *a, **k: Cache()
        torch.rms_norm = lambda *a: log.append("rms_norm")
        torch.autograd = types.SimpleNamespace(DeviceType=types.SimpleNamespace(CUDA="cuda"))
        profiler = types.ModuleType("torch.profiler")
        profiler.ProfilerActivity = types.SimpleNamespace(CUDA="cuda")
        profiler.profile = lambda **k: contextlib.nullcontext(types.SimpleNamespace(events=lambda: []))
        triton = types.ModuleType("triton")
        triton.__version__ = "stand-in"
        triton.runtime = types.SimpleNamespace(driver=types.SimpleNamespace(active=driver))
        testing = types.ModuleType("triton.testing")
        testing.do_bench = do_bench
        triton.testing = testing
        mods = {"torch": torch, "torch.profiler": profiler, "triton": triton, "triton.testing": testing}
        saved = {k: sys.modules.get(k) for k in mods}
        sys.modules.update(mods)
        sys.path.insert(0, str(SCRIPTS))
        import crosscheck_torch
        real_cudart = crosscheck_torch.cudart
        crosscheck_torch.cudart = lambda: types.SimpleNamespace(
            cudaCtxResetPersistingL2Cache=lambda: log.append("reset") or 0)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "xc.json"
                argv = sys.argv
                sys.argv = ["crosscheck_torch.py", str(DATA / "rmsnorm_gb171.json"), "-o", str(out), "--runs", "1"]
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        rc = crosscheck_torch.main()
                finally:
                    sys.argv = argv
                xc = json.loads(out.read_text())
        finally:
            crosscheck_torch.cudart = real_cudart
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v
        self.assertIn(rc, (0, 1))
        self.assertTrue(xc["rows"])
        for row in xc["rows"]:
            self.assertAlmostEqual(row["do_bench_us"], 10.2)
            self.assertAlmostEqual(row["do_bench_plain_us"], 10.2)
            self.assertAlmostEqual(row["do_bench_held_us"], 10.2)
            self.assertEqual(row["compared"], "plain")  # a tie goes to the plain do_bench
            self.assertAlmostEqual(row["do_bench_sm_mhz"], 2000.0)
            self.assertGreater(row["hold_us"], 0)
            if crosscheck_torch.wants_diagnostics(row["harness_us"], row["harness_sm_mhz"],
                                                  row["do_bench_plain_sm_mhz"]):
                self.assertAlmostEqual(row["do_bench_l2_flush_us"], 10.2)
                self.assertAlmostEqual(row["harness_protocol_py_us"], 500.0)  # the stand-in's events
            else:
                self.assertIsNone(row["harness_protocol_py_us"])
        # the held runs put a spin after the 256 MB flush, the L2 diagnostic one after its own zero_
        i = log.index("flush256", log.index(next(e for e in log if isinstance(e, tuple))) - 1)
        self.assertIsInstance(log[i + 1], tuple)
        self.assertIn("zero", log)
        self.assertEqual(log[log.index("zero") + 1][0], "sleep")
        # the harness's protocol from Python resets the persisting lines before each flush, as the harness does
        self.assertEqual(log[log.index("reset") + 1], "zero")


if __name__ == "__main__":
    unittest.main()
