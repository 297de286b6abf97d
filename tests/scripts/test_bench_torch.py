"""bench/bench_torch.py without a GPU: its command line (exit 2 for bad flags, 77 without a GPU), its case names
against the C++ binaries' listing, the verification rules on CPU tensors (planted wrong outputs must fail), its
rows built and checked on the CPU (inductor's CPU backend, triton's interpreter), the callbacks' errors as return
codes, and the report's "When is a CUDA kernel worth writing?" section on a synthetic run.

Each part needs what it tests, and skips saying what is missing: PyTorch for python3 (the rules, the rows),
libsolbench_pybench.so (a build with libtorch) for the command line, the bench binaries for their listing.
Where they are: $SOLBENCH_PYBENCH_LIB (else build/release/bench/), $SOLBENCH_BENCH_RMSNORM and
$SOLBENCH_BENCH_ATTENTION (else build/release/bench/, then build/ci/bench/); ctest's scripts_unittest sets them
to its build's.
"""
import contextlib
import ctypes
import importlib.util
import io
import json
import lzma
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import gbfake  # noqa: E402
import sbresults  # noqa: E402
from pybench.impls import IMPLEMENTATIONS, op_of  # noqa: E402
from sbreport import overhead, worth  # noqa: E402
from sbreport.common import impl_order, is_ours  # noqa: E402

DRIVER = ROOT / "bench" / "bench_torch.py"
try:
    import torch
except ImportError:
    torch = None
needs_torch = unittest.skipIf(torch is None, "PyTorch is not installed for this python3")


def found(env: str, *candidates) -> Path | None:
    if os.environ.get(env):
        return Path(os.environ[env])
    return next((p for p in candidates if p.is_file()), None)


LIB = found("SOLBENCH_PYBENCH_LIB", ROOT / "build/release/bench/libsolbench_pybench.so")
BENCH_RMSNORM = found("SOLBENCH_BENCH_RMSNORM", ROOT / "build/release/bench/bench_rmsnorm",
                      ROOT / "build/ci/bench/bench_rmsnorm")
BENCH_ATTENTION = found("SOLBENCH_BENCH_ATTENTION", ROOT / "build/release/bench/bench_attention",
                        ROOT / "build/ci/bench/bench_attention")
BENCH_E2E = found("SOLBENCH_BENCH_E2E", ROOT / "build/release/bench/bench_e2e")  # built with libtorch only
needs_lib = unittest.skipIf(torch is None or LIB is None or not LIB.is_file(),
                            "needs PyTorch and libsolbench_pybench.so (a build with libtorch)")


def driver(*args, env=None):
    environment = {**os.environ, **({"SOLBENCH_PYBENCH_LIB": str(LIB)} if LIB else {}), **(env or {})}
    return subprocess.run([sys.executable, str(DRIVER), *args], capture_output=True, text=True, timeout=300,
                          env=environment)


def listed(binary_or_driver, *args) -> list:
    if binary_or_driver == "driver":
        r = driver("--benchmark_list_tests", *args)
    else:
        r = subprocess.run([str(binary_or_driver), "--benchmark_list_tests", *args], capture_output=True, text=True,
                           timeout=120)
    assert r.returncode == 0, r.stderr
    return [sbresults.case_name(line) for line in r.stdout.split()]


def without_impl(name: str) -> str:
    op, _impl, *rest = name.split("/")
    return "/".join([op, *rest])


@needs_lib
class CommandLine(unittest.TestCase):
    def assert_usage_error(self, args, fragment, env=None):
        r = driver(*args, env=env)
        self.assertEqual(r.returncode, 2, f"{args}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        self.assertIn(fragment, r.stderr)

    def test_bad_flags_exit_2_with_the_reason(self):
        self.assert_usage_error(["--shapes=4096"], "'4096' is read by no grammar")
        self.assert_usage_error(["--shapes=b1_hq3_hkv2_d64_q1_kv8"], "not a multiple of heads_kv")
        self.assert_usage_error(["--shapes="], "--shapes= needs a value")
        self.assert_usage_error(["--no-such-flag"], "unrecognized command-line flag: --no-such-flag")
        self.assert_usage_error(["--dtypes=fp8"], "fp8")
        self.assert_usage_error(["--benchmark_repetitions=abc"], "--benchmark_repetitions takes a whole number")
        self.assert_usage_error(["--keep-inputs=2"], "bench_torch keeps the inputs of one shape at a time")
        self.assert_usage_error(["--split-sweep=all"], "--split-sweep is bench_attention's")
        self.assert_usage_error(["--build-dir"], "--build-dir needs a value")
        self.assert_usage_error(["--build-dir=/no/such/dir"], "is not a directory")

    def test_a_missing_library_exits_2_saying_how_to_build_it(self):
        self.assert_usage_error(["--benchmark_list_tests"], "not found",
                                env={"SOLBENCH_PYBENCH_LIB": "/no/such/libsolbench_pybench.so"})

    def test_help_names_the_implementations_and_both_grammars(self):
        r = driver("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for word in ("torch_flex_attention", "torch_compile_max_autotune", "--build-dir", "ROWSxHIDDEN",
                     "b<batch>_hq<heads_q>"):
            self.assertIn(word, r.stdout)

    @unittest.skipIf(torch is not None and torch.cuda.is_available(), "this machine has a GPU: the run would measure")
    def test_without_a_gpu_it_exits_77_and_measures_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "run.json"
            r = driver("--shapes=smoke", "--dtypes=bf16", f"--benchmark_out={out}")
            self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
            self.assertIn("no usable CUDA device", r.stderr)
            self.assertFalse(out.exists() and out.stat().st_size, "a run without a GPU wrote results")

    def test_every_case_name_parses_and_names_a_known_implementation(self):
        names = listed("driver", "--shapes=smoke,edge,b3_hq8_hkv2_d128_q1_kv40_p16_unif")
        cases = [n for n in names if not n.startswith("floor/")]
        self.assertTrue(cases)
        self.assertLessEqual({"floor/python_launch/cold", "floor/python_launch/hot"}, set(names))
        op_of_case = {n: op_of(sbresults.parse_name(n)) for n in cases}
        for name in cases:
            f = sbresults.parse_name(name)
            self.assertIn(f["impl"], IMPLEMENTATIONS[op_of_case[name]], name)
            self.assertIn(f["mode"], ("cold", "hot"), name)
        for op, impls in IMPLEMENTATIONS.items():  # every implementation at every shape, dtype and mode
            per_impl = {impl: {without_impl(n) for n in cases if op_of_case[n] == op and n.split("/")[1] == impl}
                        for impl in impls}
            self.assertEqual(len({frozenset(s) for s in per_impl.values()}), 1, op)
            self.assertTrue(per_impl[impls[0]], op)

    def test_the_shapes_grammar_is_the_binaries(self):
        sys.path.insert(0, str(ROOT / "bench"))
        from pybench import capi
        harness = capi.Harness(LIB)
        shapes = harness.shapes("smoke,3x7,b2_hq4_hkv1_d128_q1_kv33")
        self.assertEqual([s["name"] for s in shapes["rmsnorm"]], ["t3_h7", "t2_h1024"])
        self.assertEqual(shapes["attention"][1], {"name": "b2_hq4_hkv1_d128_q1_kv33", "workload": "decode",
                                                  "batch": 2, "heads_q": 4, "heads_kv": 1, "head_dim": 128,
                                                  "q_len": 1, "kv_len": 33, "causal": False})
        with self.assertRaisesRegex(ValueError, "read by no grammar"):
            harness.shapes("4096")
        self.assertEqual(harness.torch_version, torch.__version__.split("+")[0])

    @unittest.skipIf(BENCH_RMSNORM is None or BENCH_ATTENTION is None, "no bench_rmsnorm and bench_attention built")
    def test_case_names_match_the_cpp_binaries(self):
        """For the same shapes and dtypes, each op's cases less their implementation are the C++ binary's."""
        rmsnorm_spec = "smoke,anchors,3x7,t5_h5120"
        attention_spec = "smoke,anchors,b3_hq6_hkv3_d64_q3_kv17_causal,b3_hq8_hkv2_d128_q1_kv40_p16_unif"
        layer_spec = "smoke,h256_hq4_hkv2_d64_f512_b3_q1_kv40"
        python = listed("driver", f"--shapes={rmsnorm_spec},{attention_spec},{layer_spec}", "--dtypes=fp16,bf16")
        cpp = listed(BENCH_RMSNORM, f"--shapes={rmsnorm_spec}", "--dtypes=fp16,bf16") + \
            listed(BENCH_ATTENTION, f"--shapes={attention_spec}", "--dtypes=fp16,bf16")
        if BENCH_E2E is not None:  # built with libtorch only: without it, the layer's cases are not compared
            cpp += listed(BENCH_E2E, f"--shapes={layer_spec}", "--dtypes=fp16,bf16")

        def of(names, op):  # not decode_splitk's split sweep (impl decode_splitk_s<N>), nor bench_e2e's training steps
            return {without_impl(n) for n in names if not n.startswith("floor/") and
                    op_of(sbresults.parse_name(n)) == op and not re.search(r"_s\d+$", n.split("/")[1]) and
                    sbresults.parse_name(n)["workload"] != sbresults.TRAIN_WORKLOAD}
        for op in IMPLEMENTATIONS:
            if op == "e2e" and BENCH_E2E is None:
                continue
            mine, theirs = of(python, op), of(cpp, op)
            self.assertTrue(mine, op)
            self.assertEqual(mine, theirs, op)


@needs_torch
class Rules(unittest.TestCase):
    """pybench/verify.py against planted outputs, on CPU tensors."""

    @classmethod
    def setUpClass(cls):
        from pybench import verify
        cls.v = verify
        cls.g = torch.Generator().manual_seed(7)

    def randn(self, *shape, dtype=None, mean=0.0, std=1.0):
        return (torch.randn(*shape, generator=self.g) * std + mean).to(dtype or torch.float32)

    def test_tolerance_is_the_cpp_formula(self):
        # bf16, hidden 4096, |ref| 1: 4 * 2^-8 + 2^-24 * (16 + 4 * 64), plus 2 * 2^-133.
        tol = self.v.rmsnorm_tolerance(torch.bfloat16, 4096, torch.tensor([1.0, -2.0], dtype=torch.float64))
        expected = 4 * 2 ** -8 + 2 ** -24 * (16 + 256)
        self.assertAlmostEqual(float(tol[0]), expected + 2 * 2 ** -133, places=15)
        self.assertAlmostEqual(float(tol[1]), 2 * expected + 2 * 2 ** -133, places=15)

    def test_rows_checked_are_the_cpp_rows(self):
        self.assertEqual(self.v.rows_to_check(5, 4096, 1024), [0, 1, 2, 3, 4])
        rows = self.v.rows_to_check(5000, 4096, 1024)
        self.assertEqual((len(rows), rows[:3], rows[-2:]), (1025, [0, 4, 8], [4092, 4999]))
        picks = self.v.attention_picks(2, 4, 100)  # 800 rows > 512: 32 spread, first and last
        self.assertEqual((len(picks), picks[0], picks[-1]), (32, (0, 0, 0), (1, 3, 99)))
        self.assertEqual(self.v.attention_picks(1, 2, 3), [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 1, 0), (0, 1, 1),
                                                           (0, 1, 2)])

    def test_error_vs_tolerance_special_values(self):
        inf, nan = math.inf, math.nan
        got = torch.tensor([1.0, nan, 1.0, inf, inf, 2.0], dtype=torch.float64)
        want = torch.tensor([1.5, nan, nan, inf, 1.0, inf], dtype=torch.float64)
        e = self.v.error_vs_tolerance(got, want, torch.full_like(want, 0.25))
        self.assertEqual(e.tolist(), [2.0, 0.0, inf, 0.0, inf, inf])

    def test_round_to_dtype_is_round_to_nearest_even(self):
        x = self.randn(4096, dtype=torch.float64) * 3
        for dtype in (torch.float16, torch.bfloat16, torch.float32):
            a, b = x.to(dtype), (x * 0.37).to(dtype)
            exact = a.double() + b.double()  # exact in fp64; one rounding to the dtype
            self.assertTrue(torch.equal(self.v.round_to_dtype(exact, dtype), (a.float() + b.float()).to(dtype).double()))
        tie = torch.tensor([1 + 2 ** -8, 1 + 3 * 2 ** -8, 70000.0, 2 ** -26, 0.0], dtype=torch.float64)
        self.assertEqual(self.v.round_to_dtype(tie, torch.bfloat16).tolist()[:2], [1.0, 1 + 2 ** -6])
        r16 = self.v.round_to_dtype(tie, torch.float16).tolist()
        self.assertEqual((r16[2], r16[3], r16[4]), (math.inf, 0.0, 0.0))  # overflow; 2^-26 ties to 0 (even)

    def rmsnorm_case(self, rows, hidden, dtype):
        x, w = self.randn(rows, hidden, dtype=dtype), self.randn(hidden, dtype=dtype, mean=1.0, std=0.5)
        y = self.v.rmsnorm_reference(x.double(), w.double(), 1e-6).to(dtype)
        return x, w, y

    def test_rmsnorm_passes_a_right_output_and_fails_planted_wrong_ones(self):
        for dtype in (torch.float32, torch.float16, torch.bfloat16):
            x, w, y = self.rmsnorm_case(9, 300, dtype)
            c = self.v.check_rmsnorm(x, w, y, 1e-6)
            self.assertTrue(c.ok, c.message)
            self.assertLessEqual(c.err, 0.25)  # the reference rounded once: half an ulp of a 4-roundoff bound
            y64 = self.v.rmsnorm_reference(x.double(), w.double(), 1e-6)
            wrong = y.clone()
            wrong[4, 17] = y64[4, 17] + 3 * self.v.rmsnorm_tolerance(dtype, 300, y64[4, 17])  # 3 tolerances off
            c = self.v.check_rmsnorm(x, w, wrong, 1e-6)
            self.assertFalse(c.ok)
            self.assertIn("row 4 col 17", c.message)
            wrong = y.clone()
            wrong[8, 0] = math.nan
            self.assertFalse(self.v.check_rmsnorm(x, w, wrong, 1e-6).ok)

    def test_rmsnorm_sampled_rows_and_the_nan_scan(self):
        x, w, y = self.rmsnorm_case(4100, 8, torch.float32)  # > 4096 rows: sampled, then a NaN/Inf scan
        self.assertTrue(self.v.check_rmsnorm(x, w, y, 1e-6).ok)
        unwritten = y.clone()
        unwritten[1, 3] = math.nan  # row 1 is not sampled (step 4)
        c = self.v.check_rmsnorm(x, w, unwritten, 1e-6)
        self.assertFalse(c.ok)
        self.assertIn("1 output element(s) are NaN/Inf", c.message)

    def test_fused_add_rmsnorm_exact_residual_and_normalized_x(self):
        dtype = torch.bfloat16
        x, r, w = self.randn(5, 64, dtype=dtype), self.randn(5, 64, dtype=dtype), self.randn(64, dtype=dtype, mean=1)
        res = (x.float() + r.float()).to(dtype)
        out = self.v.rmsnorm_reference(res.double(), w.double(), 1e-6).to(dtype)
        self.assertTrue(self.v.check_fused_add_rmsnorm(x, r, w, out, res, 1e-6).ok)
        off = res.clone()
        off[2, 5] = torch.nextafter(off[2, 5].float(), torch.tensor(9.0)).to(dtype)  # not one rounded add
        off[2, 5] = off[2, 5] if off[2, 5] != res[2, 5] else res[2, 5] * 1.01
        c = self.v.check_fused_add_rmsnorm(x, r, w, out, off, 1e-6)
        self.assertFalse(c.ok)
        self.assertIn("residual row 2 col 5", c.message)
        bad = out.clone()
        bad[3, 9] = -bad[3, 9] - 1
        c = self.v.check_fused_add_rmsnorm(x, r, w, bad, res, 1e-6)
        self.assertFalse(c.ok)
        self.assertIn("x row 3 col 9", c.message)

    def test_rmsnorm_backward_dx_and_dw(self):
        dtype, eps = torch.float16, 1e-6
        x, dy = self.randn(40, 96, dtype=dtype), self.randn(40, 96, dtype=dtype)
        w = self.randn(96, dtype=dtype, mean=1.0, std=0.5)
        x64, w64 = x.double().requires_grad_(), w.double().requires_grad_()
        dx, dw = torch.autograd.grad(torch.nn.functional.rms_norm(x64, (96,), w64, eps), (x64, w64), dy.double())
        dx, dw = dx.to(dtype), dw.to(dtype)
        c = self.v.check_rmsnorm_backward(x, w, dy, dx, dw, eps)
        self.assertTrue(c.ok, c.message)
        bad_dw = dw.clone()
        bad_dw[7] = bad_dw[7] * 1.05 + 0.05
        c = self.v.check_rmsnorm_backward(x, w, dy, dx, bad_dw, eps)
        self.assertFalse(c.ok)
        self.assertIn("dw row 0 col 7", c.message)
        bad_dx = dx.clone()
        bad_dx[33, 2] += 0.1
        c = self.v.check_rmsnorm_backward(x, w, dy, bad_dx, dw, eps)
        self.assertFalse(c.ok)
        self.assertIn("dx row 33 col 2", c.message)

    def attention_case(self, b, hq, hkv, d, sq, skv, causal, dtype):
        q, k, v = (self.randn(b, s, h, d, dtype=dtype).transpose(1, 2) for s, h in ((sq, hq), (skv, hkv), (skv, hkv)))
        o = torch.zeros(b, hq, sq, d, dtype=torch.float64)
        kk, vv = (t.double().repeat_interleave(hq // hkv, 1) for t in (k, v))
        s = q.double() @ kk.transpose(-2, -1) * d ** -0.5
        if causal:
            s = s.masked_fill(~torch.ones(sq, skv, dtype=torch.bool).tril(skv - sq), -math.inf)
        p = torch.nan_to_num(torch.softmax(s, -1))  # rows that see no key: 0
        o = (p @ vv).to(dtype)
        return q, k, v, o

    def test_attention_flashattention_rule(self):
        for dtype, causal, (sq, skv) in ((torch.bfloat16, True, (7, 5)), (torch.float16, False, (1, 40)),
                                         (torch.float32, True, (9, 9))):
            q, k, v, o = self.attention_case(2, 4, 2, 16, sq, skv, causal, dtype)
            c = self.v.check_attention(q, k, v, o, causal, 16 ** -0.5)
            self.assertTrue(c.ok, f"{dtype} {causal}: {c.message}")
            bad = o.clone()
            bad[1, 3, sq - 1, 5] += 0.05
            c = self.v.check_attention(q, k, v, bad, causal, 16 ** -0.5)
            self.assertFalse(c.ok, dtype)
            self.assertIn(f"(b 1, head 3, row {sq - 1}, dim 5)", c.message)

    def test_attention_rows_that_see_no_key_must_be_zero(self):
        q, k, v, o = self.attention_case(1, 2, 1, 16, 5, 3, True, torch.bfloat16)  # rows 0 and 1 see no key
        self.assertTrue(self.v.check_attention(q, k, v, o, True, 0.25).ok)
        nan_row = o.clone()
        nan_row[0, 1, 0] = math.nan  # softmax over an all -inf row: what a composite gives
        self.assertFalse(self.v.check_attention(q, k, v, nan_row, True, 0.25).ok)


@needs_torch
class RowsOnTheCpu(unittest.TestCase):
    """Rows built and checked as the driver does, on the CPU, through the setup and launch callbacks."""

    @classmethod
    def setUpClass(cls):
        cls.interpret = os.environ.get("TRITON_INTERPRET")
        os.environ["TRITON_INTERPRET"] = "1"  # triton's interpreter runs the kernels on CPU tensors
        from pybench import capi, cases, rows
        rows.DEVICE = "cpu"
        cls.capi, cls.cases, cls.rows = capi, cases, rows

    @classmethod
    def tearDownClass(cls):
        cls.rows.DEVICE = "cuda"
        if cls.interpret is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = cls.interpret

    class Harness:
        def __init__(self):
            self.counters = {}

        def counter(self, name, value):
            self.counters[name] = value

        def shapes(self, spec):
            """Lengths for a paged shape, as bench_torch's library gives them: the batch's, the longest kv_len."""
            f = sbresults.parse_name(f"attention/x/fp32/decode/{spec}/cold")["shape"]
            return {"paged": [{"lengths": [f["kv_len"]] + [1 + 7 * i % f["kv_len"] for i in range(1, f["batch"])]}]}

    def setup(self, runner, name):
        """runner.setup called as the harness calls it: through a C function pointer of the library's type."""
        handle, err = ctypes.c_int64(-1), ctypes.c_double(-1.0)
        msg = ctypes.create_string_buffer(2048)
        rc = self.capi.SETUP(runner.setup)(name.encode(), None, ctypes.byref(handle), ctypes.byref(err), msg, len(msg))
        return rc, handle.value, err.value, msg.value.decode()

    def launch(self, runner, handle):
        msg = ctypes.create_string_buffer(256)
        return self.capi.LAUNCH(runner.launch)(handle, msg, len(msg)), msg.value.decode()

    def run_case(self, name):
        harness = self.Harness()
        runner = self.cases.Runner(harness)
        rc, handle, err, msg = self.setup(runner, name)
        self.assertEqual(rc, self.capi.OK, f"{name}: {msg}")
        self.assertLessEqual(err, 1.0)
        self.assertEqual(self.launch(runner, handle), (self.capi.OK, ""))
        rc, msg = self.launch(runner, handle + 1)
        self.assertEqual((rc, "not that of the case last set up" in msg), (self.capi.FAILED, True), msg)
        return harness.counters

    def test_triton_rows(self):
        # The interpreter's bf16 conversion truncates (the GPU's rounds to nearest): fp32 and fp16 here.
        for name in ("rmsnorm/triton/fp32/t5_h3000/cold", "rmsnorm/triton/fp16/t3_h7/hot",
                     "fused_add_rmsnorm/triton/fp16/t4_h100/cold", "rmsnorm_backward/triton/fp32/t9_h300/cold",
                     "rmsnorm_backward/triton/fp16/t3_h20000/cold"):  # one pass, and rows past MAX_BLOCK
            self.assertIn("compile_s", self.run_case(name))

    def test_compiled_rows_count_their_graphs(self):
        # fused_add_rmsnorm at t3_h7: inductor's CPU code generator fails at most other shapes of the in-place
        # function (KeyError in codegen/cpp.py's outer-loop fusion; the GPU's code generator is Triton's).
        for name in ("rmsnorm/torch_compile_composite/fp32/t4_h64/cold", "fused_add_rmsnorm/torch_compile/fp32/t3_h7/cold",
                     "rmsnorm_backward/torch_compile/fp32/t6_h32/cold",
                     "attention/torch_flex_attention/fp32/prefill/b1_hq2_hkv1_d16_q5_kv3_causal/cold"):
            counters = self.run_case(name)
            self.assertEqual((counters["graphs"], counters["recompiles"]), (1, 0), name)

    def test_layer_rows(self):
        # bf16: the CPU's inductor compiles the stock layer; solbench_op needs the operator library (a GPU's).
        for name in ("e2e/torch_compile/bf16/decode/h256_hq4_hkv2_d64_f512_b2_q1_kv33/cold",
                     "e2e/torch_compile/bf16/prefill/h256_hq4_hkv2_d64_f512_b1_q17_kv17/hot"):
            counters = self.run_case(name)
            self.assertEqual((counters["graphs"], counters["recompiles"]), (1, 0), name)
        with contextlib.redirect_stderr(io.StringIO()):
            rc, _, _, msg = self.setup(self.cases.Runner(self.Harness()),
                                       "e2e/torch_compile/fp32/decode/h256_hq4_hkv2_d64_f512_b2_q1_kv33/cold")
        self.assertEqual((rc, "fp16 and bf16" in msg), (self.capi.UNSUPPORTED, True), msg)

    def test_the_layer_check_fails_a_wrong_layer(self):
        from pybench import compiled, layer
        shape = sbresults.parse_name("e2e/x/bf16/prefill/h256_hq4_hkv2_d64_f512_b1_q17_kv17/cold")["shape"]
        inp = layer.Inputs(shape, torch.bfloat16, seed=3)
        right = inp.call(compiled.decoder_layer_for(True, compiled.rms_norm, compiled.sdpa))
        self.assertTrue(layer.check_layer(inp, right).ok)
        wrong = inp.call(compiled.decoder_layer_for(False, compiled.rms_norm, compiled.sdpa))  # no causal mask
        c = layer.check_layer(inp, wrong)
        self.assertFalse(c.ok)
        self.assertIn("max |out - ref32|", c.message)

    def test_paged_rows(self):
        for name in ("attention/torch_sdpa_masked/fp32/decode/b3_hq4_hkv2_d16_q1_kv40_p16_unif/cold",
                     "attention/torch_sdpa_masked/fp32/decode/b3_hq4_hkv2_d16_q2_kv40_causal_p16_zipf/hot",
                     # d64: inductor's CPU flex_attention gives wrong rows at head_dim 16 and kv_len 40 (compiled
                     # against eager, PyTorch 2.11), which the GPU's Triton kernel does not
                     "attention/torch_flex_attention/fp32/decode/b3_hq4_hkv2_d64_q1_kv40_p16_unif/cold"):
            self.run_case(name)

    def test_paged_inputs_pages_hold_each_sequences_keys(self):
        from pybench import paged
        shape = sbresults.parse_name("attention/x/fp32/decode/b3_hq4_hkv2_d16_q1_kv40_p16_unif/cold")["shape"]
        inp = paged.Inputs(shape, [3, 40, 17], torch.float32, seed=1)
        self.assertEqual(float(inp.k[0, :, 3:].abs().sum() + inp.v[2, :, 17:].abs().sum()), 0.0)  # zero padded
        for pool, padded in zip(inp.pages()[:2], (inp.k, inp.v)):
            table = inp.pages()[2]
            self.assertEqual(table.tolist(), [[table[0, 0].item(), -1, -1], table[1].tolist(),
                                              [table[2, 0].item(), table[2, 1].item(), -1]])
            self.assertEqual(sorted(table[table >= 0].tolist()), list(range(pool.shape[0])))  # each page once
            for b, n in enumerate(inp.lengths):
                rows = torch.stack([pool[table[b, t // 16], t % 16] for t in range(n)])
                self.assertTrue(torch.equal(rows, padded[b, :, :n].transpose(0, 1)), b)

    def test_an_fp8_shapes_inputs_are_its_caches_values(self):
        from pybench import paged
        shape = sbresults.parse_name("attention/x/fp32/decode/b3_hq4_hkv2_d16_q1_kv40_p16_unif_fp8/cold")["shape"]
        inp = paged.Inputs(shape, [3, 40, 17], torch.bfloat16, seed=1)
        k_pages, v_pages, table = inp.pages()
        self.assertEqual((k_pages.dtype, v_pages.dtype), (torch.float8_e4m3fn, torch.float8_e4m3fn))
        for b, n in enumerate(inp.lengths):
            rows = torch.stack([k_pages[table[b, t // 16], t % 16] for t in range(n)])
            self.assertTrue(torch.equal(rows.to(torch.bfloat16) * paged.FP8_K_SCALE, inp.k[b, :, :n].transpose(0, 1)))
        with self.assertRaisesRegex(self.rows.Unsupported, "PyTorch's SDPA reads no FP8 cache"):
            paged._sdpa(inp, {}, "")
        with self.assertRaisesRegex(self.rows.Unsupported, "FlexAttention reads no FP8 cache"):
            paged._flex(inp, {}, "")

    def test_paged_rows_are_checked_sequence_by_sequence(self):
        from pybench import paged
        shape = sbresults.parse_name("attention/x/fp32/decode/b3_hq4_hkv2_d16_q1_kv40_p16_unif/cold")["shape"]
        inp = paged.Inputs(shape, [3, 40, 17], torch.float32, seed=1)
        o = paged._sdpa(inp, {}, "")()
        self.assertTrue(paged.check_each_sequence(inp, o).ok)
        unmasked = torch.nn.functional.scaled_dot_product_attention(inp.q, inp.k, inp.v, enable_gqa=True)
        c = paged.check_each_sequence(inp, unmasked)  # the padding's zero keys counted: wrong for sequences 0, 2
        self.assertFalse(c.ok)
        self.assertIn("sequence 0 of 3 keys", c.message)

    def test_a_wrong_row_fails_and_an_exception_is_a_return_code(self):
        from pybench.verify import check_rmsnorm

        def planted(inputs, keep, tag):  # y = x: not normalized
            return self.rows.Built(lambda: inputs.x.clone(),
                                   lambda: check_rmsnorm(inputs.x, inputs.w, inputs.x.clone(), 1e-6))

        def refusing(inputs, keep, tag):
            raise RuntimeError("PyTorch says no")

        def buggy(inputs, keep, tag):
            raise TypeError("a bug")
        impls = self.cases.OPS["rmsnorm"][1]
        for name, fn, rc, fragment in (("planted", planted, self.capi.FAILED, "verification failed: row"),
                                       ("refusing", refusing, self.capi.UNSUPPORTED, "RuntimeError: PyTorch says no"),
                                       ("buggy", buggy, self.capi.FAILED, "set-up raised TypeError: a bug")):
            impls[name] = fn
            try:
                with contextlib.redirect_stderr(io.StringIO()):  # the failure's traceback, printed for the log
                    got = self.setup(self.cases.Runner(self.Harness()), f"rmsnorm/{name}/fp32/t3_h16/cold")
            finally:
                del impls[name]
            self.assertEqual((got[0], fragment in got[3]), (rc, True), got)
        with contextlib.redirect_stderr(io.StringIO()):
            got = self.setup(self.cases.Runner(self.Harness()), "rmsnorm/no_such_impl/fp32/t3_h16/cold")
        self.assertEqual((got[0], "no Python implementation 'no_such_impl'" in got[3]), (self.capi.FAILED, True), got)

    def test_fused_rows_run_in_place_and_a_write_past_the_end_fails(self):
        from pybench import rmsnorm
        inputs = rmsnorm.FusedInputs(3, 8, torch.float32, seed=1)
        tri = self.rows.triton_module("fused_add_rmsnorm_triton").fused_add_rms_norm
        tri(inputs.x, inputs.residual, inputs.w, 1e-6)
        self.assertTrue(inputs.check().ok)
        inputs.restore()
        self.assertFalse(inputs.check().ok)  # restored, not run: residual is not x + residual
        tri(inputs.x, inputs.residual, inputs.w, 1e-6)
        inputs.buffers[1][-1] = 0
        c = inputs.check()
        self.assertFalse(c.ok)
        self.assertIn("byte 255 past the end of residual was written", c.message)

    def test_operators_are_bound_by_their_schemas_argument_names(self):
        """The solbench operators' schemas (python/csrc): in place where they write, (dx, dw) where they return."""
        lib = torch.library.Library("solbench_bind_test", "DEF")
        lib.define('fused_add_rms_norm(Tensor(a!) x, Tensor(b!) residual, Tensor weight, float eps, '
                   'str variant="auto") -> ()')
        lib.define('rms_norm_backward(Tensor dy, Tensor x, Tensor weight, float eps, str variant="auto") -> '
                   '(Tensor dx, Tensor dw)')
        lib.define("needs_scale(Tensor x, float scale) -> Tensor")
        ops = torch.ops.solbench_bind_test
        values = {"x": 1, "residual": 2, "weight": 3, "eps": 4, "dy": 5, "rstd": 6, "variant": "auto"}
        self.assertEqual(self.rows.bind(ops.fused_add_rms_norm, values),
                         ({"x": 1, "residual": 2, "weight": 3, "eps": 4, "variant": "auto"}, {"x", "residual"}))
        self.assertEqual(self.rows.bind(ops.rms_norm_backward, values),
                         ({"dy": 5, "x": 1, "weight": 3, "eps": 4, "variant": "auto"}, set()))
        with self.assertRaisesRegex(self.rows.Unsupported, "no value for its argument 'scale'"):
            self.rows.bind(ops.needs_scale, values)

    def test_a_row_the_package_cannot_run_is_skipped_with_the_reason(self):
        from pybench import rows
        saved = rows._solbench
        rows._solbench = rows.Unsupported("the solbench package does not load: ImportError: not built")
        try:
            rc, _, _, msg = self.setup(self.cases.Runner(self.Harness()), "rmsnorm/solbench_op/fp32/t3_h16/cold")
        finally:
            rows._solbench = saved
        self.assertEqual((rc, msg), (self.capi.UNSUPPORTED, "the solbench package does not load: ImportError: not built"))


class WorthSection(unittest.TestCase):
    """The report's section on a synthetic run with known times."""

    @staticmethod
    def run_of(times: dict):
        cases = [{"name": n, "us": us, "bytes": 1000, "flops": 0} for n, us in times.items()]
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(gbfake.run(cases, sigma={n: 0.0 for n in times}, reps=3), f)
            f.flush()
            return sbresults.load(f.name)

    def test_table_counts_wins_and_speedups_per_regime(self):
        run = self.run_of({
            "rmsnorm/vectorized/bf16/t1_h4096/cold": 5.0, "rmsnorm/torch_compile/bf16/t1_h4096/cold": 10.0,
            "rmsnorm/torch_compile_max_autotune/bf16/t1_h4096/cold": 8.0, "rmsnorm/triton/bf16/t1_h4096/cold": 4.0,
            "rmsnorm/torch_rms_norm/bf16/t1_h4096/cold": 6.0,
            "rmsnorm/vectorized/bf16/t8_h4096/cold": 5.0, "rmsnorm/solbench_op/bf16/t8_h4096/cold": 5.5,
            "rmsnorm/torch_compile/bf16/t8_h4096/cold": 7.5, "rmsnorm/triton/bf16/t8_h4096/cold": 10.0,
            "rmsnorm/vectorized/bf16/t4096_h4096/cold": 50.0, "rmsnorm/torch_compile/bf16/t4096_h4096/cold": 40.0,
            "attention/decode_splitk/bf16/decode/b1_hq32_hkv8_d128_q1_kv4096/cold": 10.0,
            "attention/torch_flex_attention/bf16/decode/b1_hq32_hkv8_d128_q1_kv4096/cold": 30.0,
        })
        md = "\n".join(worth.worth_section(run.cases))
        self.assertIn("## When is a CUDA kernel worth writing?", md)
        head = "| op | regime | dtype | mode | shapes | fastest: ours / torch.compile / Triton / FlexAttention / eager " \
               "PyTorch | ours vs torch.compile | ours vs Triton | ours vs FlexAttention | ours vs eager PyTorch |"
        self.assertIn(head, md)
        # decode rows: Triton wins at t1 (4 < 5), ours at t8; compile 8/5 and 7.5/5; Triton 4/5 and 10/5.
        self.assertIn("| rmsnorm | decode (≤ 256 rows) | bf16 | cold | 2 | 1 / 0 / 1 / 0 / 0 | 1.55× (1.50× – 1.60×) "
                      "| 1.40× (0.80× – 2.00×) | – | 1.20× |", md)
        self.assertIn("| rmsnorm | prefill (> 256 rows) | bf16 | cold | 1 | 0 / 1 / 0 / 0 / 0 | 0.80× | – | – | – |", md)
        self.assertIn("| attention | decode | bf16 | cold | 1 | 1 / 0 / 0 / 0 / 0 | – | – | 3.00× | – |", md)
        self.assertRegex(md, r"\| rmsnorm \| ours: `vectorized` \| `kernels/rmsnorm/vectorized.cu` \| \d+ \|")
        self.assertIn("| rmsnorm | Triton | `bench/triton_kernels/rmsnorm_triton.py` |", md)

    def test_no_section_without_bench_torch_rows(self):
        run = self.run_of({"rmsnorm/vectorized/bf16/t1_h4096/cold": 5.0, "rmsnorm/torch_rms_norm/bf16/t1_h4096/cold": 6.0})
        self.assertEqual(worth.worth_section(run.cases), [])

    def test_kinds_of_implementations(self):
        run = self.run_of({f"rmsnorm/{i}/bf16/t1_h8/cold": 1.0 for i in
                           ("ref_copy", "triton", "torch_flex_attention", "solbench_op", "vectorized", "torch_compile")})
        by = {c.impl: c for c in run.cases}
        self.assertEqual({i for i, c in by.items() if is_ours(c)}, {"solbench_op", "vectorized"})
        self.assertTrue(by["triton"].is_triton and not by["triton"].is_torch)
        self.assertEqual(impl_order(run.cases), ["vectorized", "solbench_op", "torch_flex_attention", "torch_compile",
                                                 "triton", "ref_copy"])

    def test_lines_of_code(self):
        cu = "// header\n#include <x>\n\n/* a\n   block */ int a;\nint b; // tail\n   \n"
        self.assertEqual(worth.code_lines(cu, "k.cu"), {2, 5, 6})
        py = '"""doc\nstring"""\nimport x  # why\n\n# only a comment\ndef f():\n    """doc"""\n    return (1,\n            2)\n'
        self.assertEqual(worth.code_lines(py, "m.py"), {3, 6, 8, 9})
        self.assertEqual(worth.count_lines("bench/pybench/compiled.py", "rms_norm"), 2)
        for (op, kind), sources in worth.SOURCES.items():  # every file and function the section counts exists
            for path, function in sources:
                self.assertIsNotNone(worth.count_lines(path, function), f"{op} {kind}: {path} {function}")


class OverheadSection(unittest.TestCase):
    """The operator-layer section on a synthetic run with known host and eager times."""

    def test_op_layer_cost_is_the_operator_over_the_python_floor(self):
        shape = "rmsnorm/{}/bf16/t1_h4096/hot"
        rows = {shape.format("vectorized"): (2.0, 2.5, 2.6), shape.format("solbench_op"): (2.1, 14.0, 14.2),
                shape.format("torch_rms_norm"): (3.0, 6.0, 6.1), shape.format("torch_compile"): (2.4, 30.0, 30.5),
                "floor/empty_kernel/hot": (0.9, 2.2, 2.3), "floor/python_launch/hot": (0.9, 8.5, 8.6),
                shape.format("naive").replace("/hot", "/cold"): (9.0, 2.5, 0.0)}
        cases = [{"name": n, "us": us, "bytes": 0, "flops": 0,
                  "counters": {"host_us": host, **({"eager_us": eager} if eager else {})}}
                 for n, (us, host, eager) in rows.items()]
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(gbfake.run(cases, sigma={n: 0.0 for n in rows}, reps=3), f)
            f.flush()
            run = sbresults.load(f.name)
        md = "\n".join(overhead.overhead_section(run.cases))
        self.assertIn("## What a call costs: the operator layer", md)
        self.assertIn("| our kernel, launched from C++ | `vectorized` | 2.00 | 2.50 | 2.60 | 1.00× |", md)
        self.assertIn("| `solbench_op` (the operator, from Python) | `solbench_op` | 2.10 | 14.00 | 14.20 | 5.46× |", md)
        self.assertIn("| launch floor, Python (`floor/python_launch`) | `python_launch` | 0.90 | 8.50 | 8.60 | 3.31× |", md)
        self.assertIn("**5.50 µs**", md)  # 14.0 - 8.5
        self.assertNotIn("attention", md)  # no attention rows in this run: no table for it

    def test_no_section_without_the_operator_rows(self):
        cases = [{"name": "rmsnorm/vectorized/bf16/t1_h4096/hot", "us": 2.0, "bytes": 0, "flops": 0,
                  "counters": {"host_us": 2.5, "eager_us": 2.6}}]
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(gbfake.run(cases, reps=3), f)
            f.flush()
            self.assertEqual(overhead.overhead_section(sbresults.load(f.name).cases), [])


# run_suite.sh's stand-ins: nvidia-smi and cmake; bench_rmsnorm and bench_attention; bench/bench_torch.py, which records its
# arguments and writes one synthetic row of its own; and a python3 that says yes to `import torch, triton` (the
# suite's test of whether bench_torch can run) and hands everything else to this Python.
FAKE_TORCH_BENCH = """#!/usr/bin/env python3
import json, os, sys
sys.path.insert(0, {here!r})
import gbfake
args = sys.argv[1:]
open(os.path.join({tmp!r}, "torch_args"), "a").write(" ".join(args) + "\\n")
if "--benchmark_list_tests" in args:
    sys.exit(0)
out = next(a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out="))
ctx = gbfake.context(executable=sys.argv[0], date="2026-01-01T00:00:09")
gbfake.write(out, gbfake.run([gbfake.rmsnorm("torch_rms_norm", "bf16", 1, 4096, "cold") | {{
    "name": "rmsnorm/torch_compile/bf16/t1_h4096/cold"}}], reps=2, ctx=ctx))
"""
FAKE_CPP_BENCH = """#!/usr/bin/env python3
import os, sys
sys.path.insert(0, {here!r})
import gbfake
args = sys.argv[1:]
if "--benchmark_list_tests" in args:
    sys.exit(0)
out = next(a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out="))
case = gbfake.rmsnorm("vectorized", "bf16", 1, 4096, "cold") if sys.argv[0].endswith("rmsnorm") else \\
    gbfake.attention("manual", "bf16", "decode", 1, 32, 8, 128, 1, 4096, False, "cold")
gbfake.write(out, gbfake.run([case], reps=2, ctx=gbfake.context(executable=sys.argv[0], date="2026-01-01T00:00:01")))
"""
FAKE_PYTHON = """#!/bin/sh
[ "$1" = -c ] && [ "$2" = "import torch, triton" ] && exit 0
exec {python!r} "$@"
"""


class RunSuite(unittest.TestCase):
    """scripts/run_suite.sh runs bench_torch as the bench `torch`, by default where it can run."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        d = Path(self.tmp.name)
        self.root, self.bin, self.build = d / "repo", d / "bin", d / "repo" / "build" / "release"
        for folder in ("scripts", "bench"):
            (self.root / folder).mkdir(parents=True)
        for name in ("run_suite.sh", "sbresults.py"):
            (self.root / "scripts" / name).write_text((ROOT / "scripts" / name).read_text())
        (self.root / "scripts" / "report.py").write_text("import sys\n")
        (self.build / "bench").mkdir(parents=True)
        self.bin.mkdir()
        here = str(Path(__file__).resolve().parent)
        stand_ins = {self.bin / "nvidia-smi": "#!/bin/sh\ncase $1 in --query-gpu=name) echo 'NVIDIA H200' ;; "
                                              "*) echo 'GPU 0: NVIDIA H200' ;; esac\n",
                     self.bin / "cmake": "#!/bin/sh\necho 'solbench: libtorch found'\n",
                     self.bin / "python3": FAKE_PYTHON.format(python=sys.executable),
                     self.build / "bench" / "bench_rmsnorm": FAKE_CPP_BENCH.format(here=here),
                     self.build / "bench" / "bench_attention": FAKE_CPP_BENCH.format(here=here),
                     self.root / "bench" / "bench_torch.py": FAKE_TORCH_BENCH.format(here=here, tmp=str(d))}
        for path, text in stand_ins.items():
            path.write_text(text)
            path.chmod(0o755)

    def suite(self, *args):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SOLBENCH_", "FAKE_"))}
        env["PATH"] = f"{self.bin}:{env['PATH']}"
        return subprocess.run(["bash", str(self.root / "scripts" / "run_suite.sh"), "--skip", "tests,crosscheck,sanitizer",
                               *args], capture_output=True, text=True, env=env, cwd=self.tmp.name, timeout=120)

    def test_torch_runs_by_default_where_its_library_is_built_and_its_json_is_merged(self):
        r = self.suite("--benches", "rmsnorm,torch", "--dtypes", "bf16", "--shapes", "smoke")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)  # named, but not built
        self.assertIn("--benches: torch needs", r.stderr)
        r = self.suite("--dtypes", "bf16")
        self.assertIn("bench_torch: needs libsolbench_pybench.so", r.stderr)  # left out by default, saying why
        self.assertFalse((Path(self.tmp.name) / "torch_args").exists())
        (self.build / "bench" / "libsolbench_pybench.so").write_bytes(b"")
        r = self.suite("--dtypes", "bf16", "--shapes", "smoke", "--repetitions", "2")
        self.assertNotIn("bench_torch: needs", r.stderr)
        args = (Path(self.tmp.name) / "torch_args").read_text().splitlines()
        self.assertEqual(args[0], f"--build-dir={self.build} --dtypes=bf16 --shapes=smoke --benchmark_list_tests")
        self.assertIn("--benchmark_repetitions=2", args[1])
        self.assertTrue((self.root / "results" / "h200" / "logs" / "bench_torch.json").is_file())
        with lzma.open(self.root / "results" / "h200" / "latest.json.xz", "rt") as f:
            names = {b["name"] for b in json.load(f)["benchmarks"]}
        self.assertIn("rmsnorm/torch_compile/bf16/t1_h4096/cold/manual_time", names)
        self.assertIn("rmsnorm/vectorized/bf16/t1_h4096/cold/manual_time", names)


    def test_leaving_out_bench_e2e_for_its_dtypes_keeps_torch(self):
        (self.build / "bench" / "libsolbench_pybench.so").write_bytes(b"")
        e2e = self.build / "bench" / "bench_e2e"
        e2e.write_text((self.build / "bench" / "bench_rmsnorm").read_text())
        e2e.chmod(0o755)
        r = self.suite("--dtypes", "fp32", "--repetitions", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bench_e2e: runs fp16 and bf16 only", r.stderr)
        self.assertEqual(sorted(p.name for p in (self.root / "results" / "h200" / "logs").glob("bench_*.json")),
                         ["bench_attention.json", "bench_rmsnorm.json", "bench_torch.json"])


class Crosscheck(unittest.TestCase):
    """crosscheck_torch.py covers bench_torch's rows (it reads their names without importing torch)."""

    def test_python_rows_are_checkable(self):
        spec = importlib.util.spec_from_file_location("crosscheck_torch", ROOT / "scripts" / "crosscheck_torch.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        rows = module.python_rows()
        self.assertEqual(rows, IMPLEMENTATIONS)
        case = sbresults.Case(name="", source="", **sbresults.parse_name("fused_add_rmsnorm/triton/bf16/t1_h8/cold"))
        self.assertTrue(module.checkable(case, rows))
        case = sbresults.Case(name="", source="", **sbresults.parse_name("fused_add_rmsnorm/vectorized/bf16/t1_h8/cold"))
        self.assertFalse(module.checkable(case, rows))


if __name__ == "__main__":
    unittest.main()
