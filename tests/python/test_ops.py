#!/usr/bin/env python3
"""The kernels as PyTorch operators (python/solbench over libsolbench_ops.so).

usage: test_ops.py [--ops-lib=PATH/TO/libsolbench_ops.so] [unittest arguments]
- Every test skips without PyTorch ("PyTorch is not installed") and without the built library (the
  ImportError says how to build it); the GPU tests skip without a GPU (SOLBENCH_REQUIRE_GPU=1 fails them).
- Exits 77 when every test skipped (ctest: Skipped), printing why.
- CPU tests: schemas, variant lists, fake kernels under FakeTensorMode and on meta tensors, CPU tensors
  refused by name, rms_norm's autograd and fused_add_rms_norm's refusal of it and its version counters on meta
  tensors, nn.RMSNorm's constructor against torch.nn.RMSNorm's, a Llama-style block traced whole (forward,
  and forward with backward).
- GPU tests: opcheck; rms_norm against F.rms_norm in fp64 with the suite's per-element tolerance, its backward
  against autograd of F.rms_norm in fp64 with the suite's backward tolerances, fused_add_rms_norm against the
  fp64 composite; attention, and attention over a paged cache (ragged batches, page sizes 16 to 256), against
  the fp64 reference with FlashAttention's rule; every variant by name; bad inputs; torch.compile of a
  Llama-style block, inference and a training step.
"""
import copy
import inspect
import math
import os
import pathlib
import sys
import unittest

import ctest_main  # tests/python/ctest_main.py: exit 77 when every test skipped

ROOT = pathlib.Path(__file__).resolve().parents[2]

for _arg in list(sys.argv[1:]):
    if _arg.startswith("--ops-lib="):
        os.environ["SOLBENCH_OPS_LIB"] = _arg.split("=", 1)[1]
        sys.argv.remove(_arg)

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None


def _import_solbench():
    """(the package, None) or (None, why every test skips)."""
    if torch is None:
        return None, "PyTorch is not installed"
    sys.path.insert(0, str(ROOT / "python"))
    try:
        import solbench
    except ImportError as e:
        return None, str(e)
    return solbench, None


solbench, LIBRARY_REASON = _import_solbench()


def _gpu_reason():
    if not torch.cuda.is_available():
        try:
            torch.cuda.init()
        except Exception as e:  # the driver's or the runtime's own words
            return f"no GPU: {str(e).splitlines()[0]}"
        return "no GPU: torch.cuda.is_available() is False"
    return None


def variants_def(op):
    """The variant names in kernels/<op>/variants.def, in order."""
    names = []
    for line in (ROOT / "kernels" / op / "variants.def").read_text().splitlines():
        if line.startswith("SB_VARIANT("):
            names.append(line[len("SB_VARIANT("):].split(",", 1)[0])
    return names


class OpsTest(unittest.TestCase):
    """Needs PyTorch and the operator library; no GPU."""

    def setUp(self):
        if solbench is None:
            self.skipTest(LIBRARY_REASON)


class GpuOpsTest(OpsTest):
    """Needs a GPU too."""

    def setUp(self):
        super().setUp()
        why = _gpu_reason()
        if why:
            if os.environ.get("SOLBENCH_REQUIRE_GPU"):
                self.fail(why)
            self.skipTest(why)
        torch.manual_seed(0)
        torch.backends.cuda.matmul.allow_tf32 = False  # fp32 products in fp32, as the tolerance assumes


# ---------------------------------------------------------------------------------------------------------
# References and tolerance rules (bench/rmsnorm_case.h, bench/attention_case.h).

def unit_roundoff(dtype):
    return {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}[dtype]


def min_subnormal(dtype):
    return {torch.float32: 2.0**-149, torch.float16: 2.0**-24, torch.bfloat16: 2.0**-133}[dtype]


def assert_rms_norm_close(test, y, x, w, eps):
    """Per element |y - ref| <= |ref| (4 u + u32 (16 + 4 sqrt(hidden))) + 2 min_subnormal, ref =
    F.rms_norm in fp64 on the dtype's inputs."""
    hidden = x.shape[-1]
    ref = F.rms_norm(x.double(), [hidden], w.double(), eps)
    rel = 4 * unit_roundoff(x.dtype) + unit_roundoff(torch.float32) * (16 + 4 * math.sqrt(hidden))
    tol = ref.abs() * rel + 2 * min_subnormal(x.dtype)
    err = ((y.double() - ref).abs() / tol).nan_to_num(nan=math.inf)
    test.assertEqual(y.shape, x.shape)
    test.assertEqual(y.dtype, x.dtype)
    test.assertLessEqual(err.max().item(), 1.0, f"worst error {err.max().item():.3g} x tolerance")


def assert_rms_norm_backward_close(test, dx, dw, dy, x, w, eps):
    """dx and dw against autograd of F.rms_norm in fp64 on the dtype's inputs, per element, with the suite's
    backward tolerances (bench/rmsnorm_backward_case.h), which depend on the dtype and the problem only:
      dx: 4 u |ref| + 3 u32 (16 + 4 sqrt(hidden)) scale + 2 min_subnormal, scale = rstd (|g| + |x̂| (|m| +
          mean|x̂ g|)) the magnitude of dx's terms (g = w dy, x̂ = x rstd, m = mean(x̂ g)): dx may cancel far below it;
      dw: 4 u |ref| + u32 (8 sqrt(rows) + 18 + 4 sqrt(hidden)) sum|dy x̂|, the fp32 sum's probabilistic bound.
    A failure also reports PyTorch's own backward in the same dtype against the same tolerance, for scale."""
    hidden = x.shape[-1]
    rows = x.numel() // hidden
    x64, w64 = x.double().requires_grad_(), w.double().requires_grad_()
    ref_dx, ref_dw = torch.autograd.grad(F.rms_norm(x64, [hidden], w64, eps), (x64, w64), dy.double())
    xr, dyr = x.double().reshape(rows, hidden), dy.double().reshape(rows, hidden)
    rstd = torch.rsqrt(xr.square().mean(-1, keepdim=True) + eps)
    xhat, g = xr * rstd, w.double() * dyr
    dx_scale = rstd * (g.abs() + xhat.abs() * ((xhat * g).mean(-1, keepdim=True).abs() +
                                               (xhat * g).abs().mean(-1, keepdim=True)))
    u, u32, tiny = unit_roundoff(x.dtype), unit_roundoff(torch.float32), 2 * min_subnormal(x.dtype)
    dx_tol = 4 * u * ref_dx.abs() + 3 * u32 * (16 + 4 * math.sqrt(hidden)) * dx_scale.reshape(x.shape) + tiny
    dw_tol = (4 * u * ref_dw.abs() + u32 * (8 * math.sqrt(rows) + 18 + 4 * math.sqrt(hidden)) *
              (dyr * xhat).abs().sum(0) + tiny)

    def worst(got, ref, tol):
        return ((got.double() - ref).abs() / tol).nan_to_num(nan=math.inf).max().item()

    xs, ws = x.detach().requires_grad_(), w.detach().requires_grad_()
    same_dx, same_dw = torch.autograd.grad(F.rms_norm(xs, [hidden], ws, eps), (xs, ws), dy)
    for name, got, ref, tol, same in (("dx", dx, ref_dx, dx_tol, same_dx), ("dw", dw, ref_dw, dw_tol, same_dw)):
        test.assertEqual((got.shape, got.dtype), (ref.shape, x.dtype), name)
        err = worst(got, ref, tol)
        test.assertLessEqual(err, 1.0, f"{name}: worst error {err:.3g} x tolerance (PyTorch's backward in "
                                       f"{x.dtype}: {worst(same, ref, tol):.3g} x)")


def repeat_kv(t, groups):
    return t.repeat_interleave(groups, dim=1)


def causal_mask(q_len, kv_len, device):
    """Bottom-right: query i sees key j iff j <= i + kv_len - q_len."""
    i = torch.arange(q_len, device=device)[:, None]
    j = torch.arange(kv_len, device=device)[None, :]
    return j <= i + (kv_len - q_len)


def attention_ref(q, k, v, causal, scale, dtype):
    """Attention in `dtype` as PyTorch's manual composite computes it (Q K^T rounded to the dtype, scaled in
    fp32, softmax in fp32 rounded, P V): fp64 gives the reference, the problem's dtype `same`. A row that
    sees no key is 0."""
    groups = q.shape[1] // k.shape[1]
    q, k, v = q.to(dtype), repeat_kv(k, groups).to(dtype), repeat_kv(v, groups).to(dtype)
    s = ((q @ k.transpose(-1, -2)).to(torch.promote_types(dtype, torch.float32)) * scale).to(dtype)
    if causal:
        s = s.masked_fill(~causal_mask(q.shape[2], k.shape[2], q.device), -math.inf)
    p = torch.softmax(s.to(torch.promote_types(dtype, torch.float32)), dim=-1).to(dtype)
    return (p @ v).nan_to_num(nan=0.0)


def assert_attention_close(test, o, q, k, v, causal, scale=None):
    """max |o - ref| <= 2 max |same - ref| + 1e-5 (FlashAttention's rule)."""
    scale = scale if scale is not None else 1 / math.sqrt(q.shape[-1])
    ref = attention_ref(q, k, v, causal, scale, torch.float64)
    same = attention_ref(q, k, v, causal, scale, q.dtype).double()
    test.assertEqual(o.shape, q.shape)
    test.assertEqual(o.dtype, q.dtype)
    ours, bound = (o.double() - ref).abs().max().item(), 2 * (same - ref).abs().max().item() + 1e-5
    test.assertLessEqual(ours, bound, f"max |ours - ref| {ours:.3g} > 2 max |same - ref| + 1e-5 = {bound:.3g}")


def sdpa_gqa(q, k, v, causal=False):
    """solbench.attention's semantics by PyTorch's SDPA, which has a backward (q_len == kv_len here, where
    SDPA's top-left causal mask is the bottom-right one)."""
    groups = q.shape[1] // k.shape[1]
    return F.scaled_dot_product_attention(q, repeat_kv(k, groups), repeat_kv(v, groups), is_causal=causal)


def qkv(batch, heads_q, heads_kv, q_len, kv_len, head_dim, dtype, device="cuda"):
    return (torch.randn(batch, heads_q, q_len, head_dim, device=device, dtype=dtype),
            torch.randn(batch, heads_kv, kv_len, head_dim, device=device, dtype=dtype),
            torch.randn(batch, heads_kv, kv_len, head_dim, device=device, dtype=dtype))


def paged_cache(ks, vs, page_size, device="cuda", unowned=math.nan):
    """K and V of sequences of their own lengths (ks[b], vs[b]: [heads_kv, len_b, head_dim]) in vLLM's page
    pools [num_pages, page_size, heads_kv, head_dim], every sequence's pages scattered over the pool (2 pages
    spare), and its block table [batch, max_pages] (-1 past a sequence) and lengths, int32. The rows no
    sequence owns hold `unowned` (NaN: a kernel that reads them and lets them reach O fails)."""
    lens = [k.shape[1] for k in ks]
    pages_of = [-(-n // page_size) for n in lens]
    num_pages, max_pages = sum(pages_of) + 2, max(pages_of)
    heads_kv, head_dim = ks[0].shape[0], ks[0].shape[2]
    order = torch.randperm(num_pages, generator=torch.Generator().manual_seed(num_pages)).tolist()
    k_cache = torch.full((num_pages, page_size, heads_kv, head_dim), unowned, dtype=ks[0].dtype, device=device)
    v_cache = torch.full_like(k_cache, unowned)
    table = torch.full((len(ks), max_pages), -1, dtype=torch.int32)
    for b, (k, v) in enumerate(zip(ks, vs)):
        for j in range(pages_of[b]):
            page, rows = order.pop(), slice(j * page_size, min((j + 1) * page_size, lens[b]))
            table[b, j] = page
            n = rows.stop - rows.start
            k_cache[page, :n] = k[:, rows].transpose(0, 1)
            v_cache[page, :n] = v[:, rows].transpose(0, 1)
    return k_cache, v_cache, table.to(device), torch.tensor(lens, dtype=torch.int32, device=device)


# (batch, heads_q, heads_kv, q_len, kv_len, head_dim, causal): GQA, MQA, q_len != kv_len causal, decode.
ATTENTION_SHAPES = [
    (1, 4, 4, 64, 64, 64, False),
    (2, 8, 2, 128, 128, 128, True),
    (1, 8, 1, 33, 200, 64, True),
    (1, 4, 2, 40, 20, 64, True),  # q_len > kv_len: the first 20 rows see no key and are 0
    (2, 32, 8, 1, 4097, 128, False),  # decode
    (1, 8, 2, 4, 1000, 128, True),  # speculative decode
]
DTYPES = ["float32", "float16", "bfloat16"]


# ---------------------------------------------------------------------------------------------------------
# CPU tests.

class Registration(OpsTest):
    def test_schemas(self):
        self.assertEqual(str(torch.ops.solbench.rms_norm.default._schema),
                         'solbench::rms_norm(Tensor x, Tensor weight, float eps, str variant="auto") -> Tensor')
        self.assertEqual(str(torch.ops.solbench.rms_norm_backward.default._schema),
                         'solbench::rms_norm_backward(Tensor dy, Tensor x, Tensor weight, float eps, '
                         'str variant="auto") -> (Tensor dx, Tensor dw)')
        self.assertEqual(str(torch.ops.solbench.fused_add_rms_norm.default._schema),
                         'solbench::fused_add_rms_norm(Tensor(a!) x, Tensor(b!) residual, Tensor weight, float eps, '
                         'str variant="auto") -> ()')
        self.assertEqual(str(torch.ops.solbench.attention.default._schema),
                         'solbench::attention(Tensor q, Tensor k, Tensor v, bool causal, float? scale=None, '
                         'str variant="auto") -> Tensor')
        self.assertEqual(str(torch.ops.solbench.paged_attention.default._schema),
                         'solbench::paged_attention(Tensor q, Tensor k_cache, Tensor v_cache, Tensor block_table, '
                         'Tensor seq_lens, Tensor? seq_lens_cpu=None, bool causal=True, float? scale=None, '
                         'float k_scale=1., float v_scale=1., str variant="auto") -> Tensor')
        for name in ("rmsnorm", "rmsnorm_backward", "fused_add_rmsnorm", "attention", "paged_attention"):
            self.assertEqual(str(getattr(torch.ops.solbench, f"{name}_variants").default._schema),
                             f"solbench::{name}_variants() -> str[]")

    def test_variants_are_the_registrys_in_variants_def_order(self):
        for op in ("rmsnorm", "rmsnorm_backward", "fused_add_rmsnorm", "attention", "paged_attention"):
            with self.subTest(op=op):
                self.assertEqual(solbench.variants(op), variants_def(op))
        with self.assertRaisesRegex(ValueError, "unknown op 'softmax'"):
            solbench.variants("softmax")

    def test_cpu_tensors_are_refused_by_name(self):
        x, w = torch.randn(4, 64), torch.ones(64)
        with self.assertRaisesRegex(RuntimeError, r"solbench::rms_norm: x is on cpu; the kernels need CUDA"):
            solbench.rms_norm(x, w)
        with self.assertRaisesRegex(RuntimeError, r"solbench::rms_norm_backward: x is on cpu; the kernels need CUDA"):
            solbench.rms_norm_backward(torch.randn(4, 64), x, w)
        r = torch.randn(4, 64)
        with self.assertRaisesRegex(RuntimeError, r"solbench::fused_add_rms_norm: x is on cpu; the kernels need CUDA"):
            solbench.fused_add_rms_norm(x, r, w)
        q, k, v = qkv(1, 2, 2, 8, 8, 64, torch.float16, device="cpu")
        with self.assertRaisesRegex(RuntimeError, r"solbench::attention: q is on cpu; the kernels need CUDA"):
            solbench.attention(q, k, v)
        k_cache, v_cache, table, lens = paged_cache([k[0]], [v[0]], 4, device="cpu")
        with self.assertRaisesRegex(RuntimeError, r"solbench::paged_attention: q is on cpu; the kernels need CUDA"):
            solbench.attention(q, k_cache, v_cache, block_table=table, seq_lens=lens)

    def test_paged_arguments_come_together(self):
        q, k, v = qkv(1, 2, 2, 1, 8, 64, torch.float16, device="cpu")
        lens = torch.tensor([8], dtype=torch.int32)
        with self.assertRaisesRegex(ValueError, "seq_lens, seq_lens_cpu, k_scale and v_scale describe a paged cache"):
            solbench.attention(q, k, v, seq_lens=lens)
        with self.assertRaisesRegex(ValueError, "describe a paged cache; pass block_table"):
            solbench.attention(q, k, v, k_scale=0.5)
        with self.assertRaisesRegex(ValueError, "a paged cache \\(block_table\\) needs seq_lens"):
            solbench.attention(q, k, v, block_table=torch.zeros(1, 2, dtype=torch.int32))


class FakeKernels(OpsTest):
    """The fake kernels give the CUDA kernels' shapes, strides, dtypes and devices (attention_op.cpp)."""

    def check(self, make):
        from torch._subclasses.fake_tensor import FakeTensorMode
        for mode, device in ((FakeTensorMode(), "cuda"), (None, "meta")):
            with self.subTest(device=device, fake=mode is not None):
                if mode is None:
                    make(device)
                else:
                    with mode:
                        make(device)

    def test_rms_norm(self):
        def make(device):
            x = torch.empty(3, 5, 1000, dtype=torch.bfloat16, device=device)
            y = solbench.rms_norm(x, torch.empty(1000, dtype=torch.bfloat16, device=device))
            self.assertEqual((y.shape, y.stride(), y.dtype, y.device.type), (x.shape, x.stride(), x.dtype, device))
        self.check(make)

    def test_rms_norm_backward(self):
        def make(device):
            x = torch.empty(3, 5, 1000, dtype=torch.float16, device=device)
            dy = torch.empty_like(x)
            dx, dw = solbench.rms_norm_backward(dy, x, torch.empty(1000, dtype=x.dtype, device=device))
            self.assertEqual((dx.shape, dx.stride(), dx.dtype, dx.device.type), (x.shape, x.stride(), x.dtype, device))
            self.assertEqual((dw.shape, dw.stride(), dw.dtype, dw.device.type), ((1000,), (1,), x.dtype, device))
        self.check(make)

    def test_fused_add_rms_norm(self):
        def make(device):
            x = torch.empty(3, 5, 1000, dtype=torch.bfloat16, device=device)
            r = torch.empty_like(x)
            self.assertIsNone(solbench.fused_add_rms_norm(x, r, torch.empty(1000, dtype=x.dtype, device=device)))
            for t in (x, r):
                self.assertEqual((t.shape, t.stride(), t.dtype, t.device.type), ((3, 5, 1000), (5000, 1000, 1),
                                                                                 torch.bfloat16, device))
        self.check(make)

    def test_attention(self):
        def make(device):
            q, k, v = qkv(2, 8, 2, 33, 200, 64, torch.float16, device=device)
            o = solbench.attention(q, k, v, causal=True)
            bshd = torch.empty(2, 33, 8, 64, device="meta").transpose(1, 2)
            self.assertEqual((o.shape, o.stride(), o.dtype, o.device.type), (q.shape, bshd.stride(), q.dtype, device))
        self.check(make)

    def test_paged_attention(self):
        def make(device):
            q = torch.empty(3, 8, 2, 128, dtype=torch.bfloat16, device=device)
            k_cache = torch.empty(40, 16, 2, 128, dtype=torch.bfloat16, device=device)
            table = torch.empty(3, 10, dtype=torch.int32, device=device)
            lens = torch.empty(3, dtype=torch.int32, device=device)
            o = solbench.attention(q, k_cache, k_cache, causal=True, block_table=table, seq_lens=lens)
            bshd = torch.empty(3, 2, 8, 128, device="meta").transpose(1, 2)
            self.assertEqual((o.shape, o.stride(), o.dtype, o.device.type), (q.shape, bshd.stride(), q.dtype, device))
        self.check(make)


class Autograd(OpsTest):
    """Which ops take part in autograd and how, on meta tensors (the fake kernels run; no GPU)."""

    def test_rms_norm_has_a_backward_in_the_inputs_dtypes(self):
        for dtype in DTYPES:
            with self.subTest(dtype=dtype):
                x = torch.empty(3, 5, 64, device="meta", dtype=getattr(torch, dtype), requires_grad=True)
                w = torch.empty(64, device="meta", dtype=x.dtype, requires_grad=True)
                solbench.rms_norm(x, w).sum().backward()
                self.assertEqual((x.grad.shape, x.grad.dtype, w.grad.shape, w.grad.dtype),
                                 (x.shape, x.dtype, w.shape, w.dtype))

    def test_rms_norm_backward_runs_the_backward_op(self):
        x = torch.empty(4, 64, device="meta", dtype=torch.bfloat16, requires_grad=True)
        w = torch.empty(64, device="meta", dtype=x.dtype, requires_grad=True)
        calls = []
        with _OpLog(calls):
            solbench.rms_norm(x, w, 1e-5).sum().backward()
        self.assertEqual(calls, ["solbench.rms_norm.default", "solbench.rms_norm_backward.default"])

    def test_module_weight_gradient_keeps_the_weights_dtype(self):
        norm = solbench.nn.RMSNorm(64, device="meta", dtype=torch.float32)  # fp32 norm weights in a bf16 model
        x = torch.empty(4, 64, device="meta", dtype=torch.bfloat16, requires_grad=True)
        y = norm(x)
        y.sum().backward()
        self.assertEqual((y.dtype, x.grad.dtype, norm.weight.grad.dtype), (torch.bfloat16,) * 2 + (torch.float32,))

    def test_fused_add_rms_norm_refuses_inputs_that_require_grad(self):
        for name in ("x", "residual", "weight"):
            with self.subTest(requires_grad=name):
                t = {"x": torch.empty(4, 64, device="meta"), "residual": torch.empty(4, 64, device="meta"),
                     "weight": torch.empty(64, device="meta")}
                t[name].requires_grad_()
                with self.assertRaisesRegex(RuntimeError, f"solbench::fused_add_rms_norm: {name} requires grad, but "
                                            "the op writes x and residual in place and has no backward"):
                    solbench.fused_add_rms_norm(t["x"], t["residual"], t["weight"])
                with torch.no_grad():
                    solbench.fused_add_rms_norm(t["x"], t["residual"], t["weight"])  # no autograd: runs

    def test_fused_add_rms_norm_bumps_the_version_of_what_it_writes(self):
        x, r, w = torch.empty(4, 64, device="meta"), torch.empty(4, 64, device="meta"), torch.empty(64, device="meta")
        solbench.fused_add_rms_norm(x, r, w)
        self.assertEqual((x._version, r._version, w._version), (1, 1, 0))
        # So a backward that needs x's value from before the op is refused rather than given the new one.
        a = torch.empty(4, 64, device="meta", requires_grad=True)
        x = a * 2
        y = x * x  # saves x
        with torch.no_grad():
            solbench.fused_add_rms_norm(x, r, w)
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
            y.sum().backward()


class _OpLog(torch.utils._python_dispatch.TorchDispatchMode if torch else object):
    """Appends the name of every solbench op dispatched while active to `calls`."""

    def __init__(self, calls):
        super().__init__()
        self.calls = calls

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace == "solbench":
            self.calls.append(str(func))
        return func(*args, **(kwargs or {}))


class RMSNormModule(OpsTest):
    def test_constructor_matches_torch(self):
        ours = inspect.signature(solbench.nn.RMSNorm.__init__).parameters
        theirs = inspect.signature(torch.nn.RMSNorm.__init__).parameters
        self.assertEqual([(p.name, p.default) for p in ours.values()][:len(theirs)],
                         [(p.name, p.default) for p in theirs.values()])
        for args in [(64,), ((4, 16), 1e-5), ((64,), None, False), (64, 1e-6, True, "meta", torch.bfloat16)]:
            with self.subTest(args=args):
                a, b = solbench.nn.RMSNorm(*args), torch.nn.RMSNorm(*args)
                self.assertEqual(repr(a), repr(b))
                self.assertEqual((a.normalized_shape, a.eps, a.elementwise_affine),
                                 (b.normalized_shape, b.eps, b.elementwise_affine))
                self.assertEqual({k: (v.shape, v.dtype, v.device) for k, v in a.state_dict().items()},
                                 {k: (v.shape, v.dtype, v.device) for k, v in b.state_dict().items()})
                if b.weight is not None and b.weight.device.type != "meta":
                    self.assertTrue(torch.equal(a.weight, b.weight))  # reset_parameters: ones
                a.load_state_dict(b.state_dict())

    def test_forward_checks_the_trailing_shape(self):
        with self.assertRaisesRegex(RuntimeError, r"expected an input of shape \[\*, 4, 16\]"):
            solbench.nn.RMSNorm((4, 16), device="meta")(torch.empty(2, 64, device="meta"))


class LlamaBlock(torch.nn.Module if torch else object):
    """A Llama-style block: RMSNorm, GQA causal attention, RMSNorm, SwiGLU MLP (no RoPE: the ops are the point).
    attention: solbench.attention by default; sdpa_gqa where the block trains (solbench.attention has no
    backward)."""

    def __init__(self, dim=512, heads=8, kv_heads=2, hidden=1024, device=None, dtype=None, attention=None):
        super().__init__()
        f = {"device": device, "dtype": dtype}
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.attention = attention or solbench.attention
        self.attn_norm = solbench.nn.RMSNorm(dim, eps=1e-6, **f)
        self.wqkv = torch.nn.Linear(dim, (heads + 2 * kv_heads) * self.head_dim, bias=False, **f)
        self.wo = torch.nn.Linear(dim, dim, bias=False, **f)
        self.mlp_norm = solbench.nn.RMSNorm(dim, eps=1e-6, **f)
        self.gate_up = torch.nn.Linear(dim, 2 * hidden, bias=False, **f)
        self.down = torch.nn.Linear(hidden, dim, bias=False, **f)

    def forward(self, x):
        b, s, dim = x.shape
        q, k, v = self.wqkv(self.attn_norm(x)).split(
            [self.heads * self.head_dim, self.kv_heads * self.head_dim, self.kv_heads * self.head_dim], dim=-1)
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)  # strided BSHD rows: the op copies them
        k = k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        o = self.attention(q, k, v, causal=True)
        x = x + self.wo(o.transpose(1, 2).reshape(b, s, dim))
        gate, up = self.gate_up(self.mlp_norm(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


def compiled_whole(test, block, x, backend):
    """block(x) by torch.compile(fullgraph=True) with `backend`, after checking that dynamo sees no graph
    break; for inference (solbench.attention has no backward kernel yet)."""
    torch._dynamo.reset()
    with torch.no_grad():
        explained = torch._dynamo.explain(block)(x)
        test.assertEqual(explained.graph_break_count, 0, explained.break_reasons)
        return torch.compile(block, backend=backend, fullgraph=True)(x)


class Tracing(OpsTest):
    def test_a_llama_block_traces_whole_on_meta_tensors(self):
        block = LlamaBlock(device="meta", dtype=torch.bfloat16)
        x = torch.empty(2, 16, 512, device="meta", dtype=torch.bfloat16)
        y = compiled_whole(self, block, x, "aot_eager")
        self.assertEqual((y.shape, y.dtype), (x.shape, x.dtype))

    def test_a_llama_block_traces_whole_with_its_backward_on_meta_tensors(self):
        """AOTAutograd's forward graph holds the two RMSNorm forwards, its backward graph the two
        rms_norm_backward calls (the registered autograd formula, traced), and no graph breaks."""
        from functorch.compile import make_boxed_func
        from torch._dynamo.backends.common import aot_autograd
        graphs = {}

        def keep(kind):
            def compiler(gm, example_inputs):
                graphs[kind] = gm
                return make_boxed_func(gm.forward)
            return compiler

        torch._dynamo.reset()
        block = LlamaBlock(device="meta", dtype=torch.bfloat16, attention=sdpa_gqa)
        x = torch.empty(2, 16, 512, device="meta", dtype=torch.bfloat16, requires_grad=True)
        compiled = torch.compile(block, backend=aot_autograd(fw_compiler=keep("forward"), bw_compiler=keep("backward")),
                                 fullgraph=True)
        compiled(x).sum().backward()
        self.assertEqual((x.grad.shape, x.grad.dtype), (x.shape, x.dtype))
        for norm in (block.attn_norm, block.mlp_norm):
            self.assertEqual((norm.weight.grad.shape, norm.weight.grad.dtype), (norm.weight.shape, norm.weight.dtype))

        def calls(kind, op):
            return sum(node.target is op for node in graphs[kind].graph.nodes)
        self.assertEqual(calls("forward", torch.ops.solbench.rms_norm.default), 2)
        self.assertEqual(calls("backward", torch.ops.solbench.rms_norm_backward.default), 2)


# ---------------------------------------------------------------------------------------------------------
# GPU tests.

class RmsNormGpu(GpuOpsTest):
    SHAPES = [(1, 64), (1, 4096), (7, 1000), (3, 5, 4097), (256, 8192), (5, 33), (2, 24576)]

    def test_against_f_rms_norm(self):
        for dtype in DTYPES:
            for shape in self.SHAPES:
                with self.subTest(dtype=dtype, shape=shape):
                    dtype_ = getattr(torch, dtype)
                    x = torch.randn(shape, device="cuda", dtype=dtype_)
                    w = (1 + 0.5 * torch.randn(shape[-1], device="cuda")).to(dtype_)
                    assert_rms_norm_close(self, solbench.rms_norm(x, w, 1e-6), x, w, 1e-6)

    def test_every_variant_by_name(self):
        x = torch.randn(9, 1000, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(1000, device="cuda", dtype=torch.bfloat16)
        for name in solbench.variants("rmsnorm"):
            with self.subTest(variant=name):
                assert_rms_norm_close(self, solbench.rms_norm(x, w, 1e-5, variant=name), x, w, 1e-5)

    def test_module_matches_torch(self):
        for shape, affine in [(4096, True), ((4, 16), True), (1000, False)]:
            with self.subTest(shape=shape, affine=affine):
                ours = solbench.nn.RMSNorm(shape, eps=1e-6, elementwise_affine=affine, device="cuda")
                theirs = torch.nn.RMSNorm(shape, eps=1e-6, elementwise_affine=affine, device="cuda")
                if affine:
                    torch.nn.init.normal_(theirs.weight, 1.0, 0.5)
                    ours.load_state_dict(theirs.state_dict())
                x = torch.randn(3, 7, *ours.normalized_shape, device="cuda").transpose(0, 1)  # not contiguous
                torch.testing.assert_close(ours(x), theirs(x), rtol=1e-5, atol=1e-6)

    def test_module_backward(self):
        """nn.RMSNorm's gradients are the backward kernels', dx in the (non-contiguous) input's layout; an fp32
        weight under a bf16 input is cast to bf16 first (the reference takes the cast weight) and its gradient
        comes back in fp32."""
        for dtype, weight_dtype in [(torch.float32,) * 2, (torch.bfloat16,) * 2, (torch.bfloat16, torch.float32)]:
            with self.subTest(dtype=dtype, weight_dtype=weight_dtype):
                norm = solbench.nn.RMSNorm(1000, eps=1e-6, device="cuda", dtype=weight_dtype)
                torch.nn.init.normal_(norm.weight, 1.0, 0.5)
                x_leaf = torch.randn(3, 7, 1000, device="cuda", dtype=dtype, requires_grad=True)
                x = x_leaf.transpose(0, 1)  # not contiguous
                dy = torch.randn(x.shape, device="cuda", dtype=dtype)
                y = norm(x)
                y.backward(dy)
                w = norm.weight.detach().to(dtype)
                assert_rms_norm_close(self, y.detach(), x.detach(), w, 1e-6)
                self.assertEqual(norm.weight.grad.dtype, weight_dtype)
                assert_rms_norm_backward_close(self, x_leaf.grad.transpose(0, 1), norm.weight.grad.to(dtype), dy,
                                               x.detach(), w, 1e-6)

    def test_opcheck(self):
        """Every check opcheck has; with inputs that require grad, the registered backward's too."""
        for dtype in DTYPES:
            for shape in [(1, 64), (3, 5, 1000), (64, 4096)]:
                for requires_grad in (False, True):
                    with self.subTest(dtype=dtype, shape=shape, requires_grad=requires_grad):
                        x = torch.randn(shape, device="cuda", dtype=getattr(torch, dtype), requires_grad=requires_grad)
                        w = torch.randn(shape[-1], device="cuda", dtype=x.dtype, requires_grad=requires_grad)
                        torch.library.opcheck(torch.ops.solbench.rms_norm.default, (x, w, 1e-6, "auto"))

    def test_bad_inputs_raise_naming_what_is_wrong(self):
        x = torch.randn(4, 64, device="cuda", dtype=torch.float16)
        w = torch.ones(64, device="cuda", dtype=torch.float16)
        cases = [
            ((x.double(), w.double(), 1e-6, "auto"), "x has dtype Double"),
            ((x, w.float(), 1e-6, "auto"), "weight has dtype Float but x has Half"),
            ((x, w.cpu(), 1e-6, "auto"), "weight is on cpu"),
            ((x, torch.ones(32, device="cuda", dtype=x.dtype), 1e-6, "auto"), r"weight has shape \[32\]"),
            ((torch.randn(64, 4, device="cuda", dtype=x.dtype).t(), w, 1e-6, "auto"), "x must be contiguous"),
            ((x, w, -1.0, "auto"), "eps must be finite and >= 0"),
            ((x, w, 1e-6, "fastest"), r"unknown variant 'fastest' \(known: naive, block_reduce"),
            ((torch.randn(65, device="cuda", dtype=x.dtype)[1:].view(4, 16), w[:16], 1e-6, "vectorized"),
             "vectorized does not support this problem: x is not 16-byte aligned"),
        ]
        for args, message in cases:
            with self.subTest(message=message):
                with self.assertRaisesRegex(RuntimeError, "solbench::rms_norm: .*" + message):
                    torch.ops.solbench.rms_norm(*args)


def bits(t):
    """t's bits as integers, so that torch.equal compares them exactly (NaN included)."""
    return t.view({8: torch.int64, 4: torch.int32, 2: torch.int16}[t.element_size()])


class RmsNormBackwardGpu(GpuOpsTest):
    # Odd hidden sizes, one row, many rows (past the 1024 partial rows of dw), rows too wide for persistent.
    SHAPES = [(1, 1), (1, 7), (1, 4096), (5, 33), (7, 1000), (3, 5, 4097), (256, 8192), (4099, 256), (65536, 64),
              (2, 24576)]

    @staticmethod
    def inputs(shape, dtype):
        """dy, x ~ N(0, 1) and weight ~ N(1, 0.5^2), as bench/rmsnorm_backward_case.h draws them."""
        dy = torch.randn(shape, device="cuda", dtype=dtype)
        x = torch.randn(shape, device="cuda", dtype=dtype)
        return dy, x, (1 + 0.5 * torch.randn(shape[-1], device="cuda")).to(dtype)

    def test_against_autograd_in_fp64(self):
        for dtype in DTYPES:
            for shape in self.SHAPES:
                with self.subTest(dtype=dtype, shape=shape):
                    dy, x, w = self.inputs(shape, getattr(torch, dtype))
                    dx, dw = solbench.rms_norm_backward(dy, x, w, 1e-6)
                    assert_rms_norm_backward_close(self, dx, dw, dy, x, w, 1e-6)

    def test_rms_norm_trains(self):
        """solbench.rms_norm's registered backward: x.grad and weight.grad within the same tolerance, also for the
        expanded (stride 0) gradient that y.sum().backward() passes."""
        for dtype in DTYPES:
            for shape in [(1, 7), (3, 5, 4097), (4099, 256)]:
                with self.subTest(dtype=dtype, shape=shape):
                    dy, x, w = self.inputs(shape, getattr(torch, dtype))
                    x.requires_grad_()
                    w.requires_grad_()
                    solbench.rms_norm(x, w, 1e-6).backward(dy)
                    assert_rms_norm_backward_close(self, x.grad, w.grad, dy, x.detach(), w.detach(), 1e-6)
        _, x, w = self.inputs((4, 64), torch.bfloat16)
        x.requires_grad_()
        w.requires_grad_()
        solbench.rms_norm(x, w, 1e-6).sum().backward()
        assert_rms_norm_backward_close(self, x.grad, w.grad, torch.ones_like(x), x.detach(), w.detach(), 1e-6)

    def test_every_variant_by_name(self):
        for name in solbench.variants("rmsnorm_backward"):
            for shape in [(9, 1000), (2000, 512)]:
                with self.subTest(variant=name, shape=shape):
                    dy, x, w = self.inputs(shape, torch.bfloat16)
                    dx, dw = solbench.rms_norm_backward(dy, x, w, 1e-5, variant=name)
                    assert_rms_norm_backward_close(self, dx, dw, dy, x, w, 1e-5)

    def test_the_same_bits_on_every_call(self):
        """dw's fixed-order reduction (no atomics) and dx: two calls give the same bits, with each variant on
        every shape it supports (persistent refuses hidden 4097) and with "auto"."""
        names, ran = ["auto", *solbench.variants("rmsnorm_backward")], set()
        for dtype in DTYPES:
            for shape in [(1, 4096), (3, 5, 4097), (4099, 256), (65536, 64)]:
                for name in names:
                    with self.subTest(dtype=dtype, shape=shape, variant=name):
                        dy, x, w = self.inputs(shape, getattr(torch, dtype))
                        try:
                            dx1, dw1 = solbench.rms_norm_backward(dy, x, w, 1e-6, name)
                        except RuntimeError as e:
                            self.assertIn(f"rmsnorm_backward/{name} does not support this problem", str(e))
                            continue
                        dx2, dw2 = solbench.rms_norm_backward(dy, x, w, 1e-6, name)
                        self.assertTrue(torch.equal(bits(dw1), bits(dw2)), "dw differs between two calls")
                        self.assertTrue(torch.equal(bits(dx1), bits(dx2)), "dx differs between two calls")
                        ran.add(name)
        self.assertEqual(ran, set(names), "a variant ran on none of the shapes")

    def test_no_rows(self):
        dx, dw = solbench.rms_norm_backward(*self.inputs((0, 64), torch.float16))
        self.assertEqual(dx.shape, (0, 64))
        self.assertTrue(torch.equal(dw, torch.zeros(64, device="cuda", dtype=torch.float16)))  # a sum over no rows

    def test_opcheck(self):
        for dtype in DTYPES:
            for shape in [(1, 64), (3, 5, 1000), (2000, 256)]:
                with self.subTest(dtype=dtype, shape=shape):
                    torch.library.opcheck(torch.ops.solbench.rms_norm_backward.default,
                                          (*self.inputs(shape, getattr(torch, dtype)), 1e-6, "auto"))

    def test_bad_inputs_raise_naming_what_is_wrong(self):
        dy, x, w = self.inputs((4, 64), torch.float16)
        strided = torch.randn(64, 4, device="cuda", dtype=x.dtype).t()
        misaligned = torch.randn(65, device="cuda", dtype=x.dtype)[1:].view(4, 16)
        cases = [
            ((dy.double(), x.double(), w.double()), {}, "x has dtype Double"),
            ((dy.float(), x, w), {}, "dy has dtype Float but x has Half"),
            ((dy, x, w.float()), {}, "weight has dtype Float but x has Half"),
            ((dy.cpu(), x, w), {}, "dy is on cpu"),
            ((dy[:2], x, w), {}, r"dy has shape \[2, 64\] but x has \[4, 64\]"),
            ((dy, x, w[:32]), {}, r"weight has shape \[32\]"),
            ((strided, x, w), {}, "dy must be contiguous"),
            ((dy, strided, w), {}, "x must be contiguous"),
            ((dy, x, w), {"eps": -1.0}, "eps must be finite and >= 0"),
            ((dy, x, w), {"variant": "fastest"}, r"unknown variant 'fastest' \(known: two_kernel, persistent\)"),
            ((misaligned, misaligned, w[:16]), {"variant": "persistent"},
             "persistent does not support this problem: x is not 16-byte aligned"),
        ]
        for args, kwargs, message in cases:
            with self.subTest(message=message):
                with self.assertRaisesRegex(RuntimeError, "solbench::rms_norm_backward: .*" + message):
                    solbench.rms_norm_backward(*args, **kwargs)


class FusedAddRmsNormGpu(GpuOpsTest):
    SHAPES = [(1, 1), (1, 7), (1, 4096), (5, 33), (7, 1000), (3, 5, 4097), (256, 8192), (4099, 256), (2, 24576)]

    @staticmethod
    def inputs(shape, dtype):
        """x, residual ~ N(0, 1), weight ~ N(1, 0.5^2), as bench/fused_add_rmsnorm_case.h draws them."""
        return (torch.randn(shape, device="cuda", dtype=dtype), torch.randn(shape, device="cuda", dtype=dtype),
                (1 + 0.5 * torch.randn(shape[-1], device="cuda")).to(dtype))

    def check(self, x, residual, w, eps=1e-6, variant="auto"):
        """Runs the op and checks it against vLLM's composite in fp64: the residual is x + residual rounded to the
        dtype, bit for bit (one rounding of an exact sum), and x is F.rms_norm of that rounded residual, within
        the suite's per-element tolerance."""
        want_residual = (x.double() + residual.double()).to(x.dtype)
        self.assertIsNone(solbench.fused_add_rms_norm(x, residual, w, eps, variant))
        self.assertTrue(torch.equal(bits(residual), bits(want_residual)), "residual != x + residual in the dtype")
        assert_rms_norm_close(self, x, want_residual, w, eps)

    def test_against_the_fp64_composite(self):
        for dtype in DTYPES:
            for shape in self.SHAPES:
                with self.subTest(dtype=dtype, shape=shape):
                    self.check(*self.inputs(shape, getattr(torch, dtype)))

    def test_adjacent_halves_of_one_buffer(self):
        """Distinct memory is all the op asks for: x and residual may be neighbours in one allocation."""
        x, _, w = self.inputs((8, 1000), torch.bfloat16)
        self.check(x[:4], x[4:], w)

    def test_every_variant_by_name(self):
        for name in solbench.variants("fused_add_rmsnorm"):
            for shape in [(9, 1000), (3, 4096)]:
                with self.subTest(variant=name, shape=shape):
                    self.check(*self.inputs(shape, torch.bfloat16), eps=1e-5, variant=name)

    def test_no_grad_runs_what_grad_mode_refuses(self):
        x, residual, w = self.inputs((4, 256), torch.float32)
        w.requires_grad_()
        with self.assertRaisesRegex(RuntimeError, "solbench::fused_add_rms_norm: weight requires grad"):
            solbench.fused_add_rms_norm(x, residual, w)
        with torch.no_grad():
            self.check(x, residual, w)

    def test_opcheck(self):
        for dtype in DTYPES:
            for shape in [(1, 64), (3, 5, 1000), (64, 4096)]:
                with self.subTest(dtype=dtype, shape=shape):
                    torch.library.opcheck(torch.ops.solbench.fused_add_rms_norm.default,
                                          (*self.inputs(shape, getattr(torch, dtype)), 1e-6, "auto"))

    def test_bad_inputs_raise_naming_what_is_wrong_and_write_nothing(self):
        x, r, w = self.inputs((4, 64), torch.float16)
        buffer = torch.randn(5, 64, device="cuda", dtype=x.dtype)
        strided = torch.randn(64, 4, device="cuda", dtype=x.dtype).t()
        misaligned = torch.randn(129, device="cuda", dtype=x.dtype)[1:].view(2, 4, 16)
        cases = [
            ((x.double(), r.double(), w.double()), {}, "x has dtype Double"),
            ((x, r.float(), w), {}, "residual has dtype Float but x has Half"),
            ((x, r, w.float()), {}, "weight has dtype Float but x has Half"),
            ((x, r.cpu(), w), {}, "residual is on cpu"),
            ((x, r[:2], w), {}, r"residual has shape \[2, 64\] but x has \[4, 64\]"),
            ((x, r, w[:32]), {}, r"weight has shape \[32\]"),
            ((strided, r, w), {}, "x must be contiguous"),
            ((x, strided, w), {}, "residual must be contiguous"),
            ((x, x, w), {}, "x and residual share memory"),
            ((buffer[:4], buffer[1:], w), {}, "x and residual share memory"),  # overlapping rows
            ((x, r, x[1]), {}, "weight shares memory with x"),
            ((x, r, w), {"eps": -1.0}, "eps must be finite and >= 0"),
            ((x, r, w), {"variant": "fastest"}, r"unknown variant 'fastest' \(known: two_pass, vectorized\)"),
            ((misaligned[0], misaligned[1], w[:16]), {"variant": "vectorized"},
             "vectorized does not support this problem: x is not 16-byte aligned"),
        ]
        for args, kwargs, message in cases:
            with self.subTest(message=message):
                before = [a.clone() for a in args]
                with self.assertRaisesRegex(RuntimeError, "solbench::fused_add_rms_norm: .*" + message):
                    solbench.fused_add_rms_norm(*args, **kwargs)
                for a, b in zip(args, before):
                    self.assertTrue(torch.equal(bits(a), bits(b)), "a refused call wrote its inputs")


class AttentionGpu(GpuOpsTest):
    def test_against_the_fp64_reference(self):
        for dtype in DTYPES:
            for batch, hq, hkv, q_len, kv_len, d, causal in ATTENTION_SHAPES:
                with self.subTest(dtype=dtype, shape=(batch, hq, hkv, q_len, kv_len, d), causal=causal):
                    q, k, v = qkv(batch, hq, hkv, q_len, kv_len, d, getattr(torch, dtype))
                    assert_attention_close(self, solbench.attention(q, k, v, causal=causal), q, k, v, causal)

    def test_scale_and_strided_inputs(self):
        q, _, v = qkv(2, 8, 2, 64, 96, 64, torch.bfloat16)
        q = q.transpose(1, 2).contiguous().transpose(1, 2)  # BSHD memory, as a model's projections give
        k = torch.randn(2, 2, 96, 128, device="cuda", dtype=torch.bfloat16)[..., :64]  # rows 256 bytes apart
        assert_attention_close(self, solbench.attention(q, k, v, causal=True, scale=0.3), q, k, v, True, scale=0.3)

    def test_every_variant_by_name(self):
        """Each variant runs, by name, on at least one of these problems and is right where it does."""
        problems = [(torch.bfloat16, (2, 8, 2, 256, 256, 128, True)), (torch.float16, (2, 8, 2, 1, 1024, 128, False)),
                    (torch.float32, (1, 4, 2, 64, 80, 64, True))]
        for name in solbench.variants("attention"):
            ran = []
            for dtype, (batch, hq, hkv, q_len, kv_len, d, causal) in problems:
                q, k, v = qkv(batch, hq, hkv, q_len, kv_len, d, dtype)
                try:
                    o = solbench.attention(q, k, v, causal=causal, variant=name)
                except RuntimeError as e:
                    self.assertIn(f"attention/{name} does not support this problem", str(e))
                    continue
                with self.subTest(variant=name, dtype=dtype):
                    assert_attention_close(self, o, q, k, v, causal)
                ran.append(dtype)
            self.assertTrue(ran, f"{name} ran on none of the problems")

    def test_opcheck(self):
        for dtype in DTYPES:
            for batch, hq, hkv, q_len, kv_len, d, causal in [(1, 4, 2, 64, 64, 64, True), (2, 8, 2, 1, 512, 128, False)]:
                with self.subTest(dtype=dtype, q_len=q_len):
                    q, k, v = qkv(batch, hq, hkv, q_len, kv_len, d, getattr(torch, dtype))
                    torch.library.opcheck(torch.ops.solbench.attention.default, (q, k, v, causal, None, "auto"))

    def test_bad_inputs_raise_naming_what_is_wrong(self):
        q, k, v = qkv(1, 8, 4, 16, 16, 64, torch.bfloat16)
        cases = [
            ((q.double(), k.double(), v.double()), {}, "q has dtype Double"),
            ((q, k.half(), v), {}, "k has dtype Half but q has BFloat16"),
            ((q, k, v.cpu()), {}, "v is on cpu"),
            ((q[0], k[0], v[0]), {}, "q, k and v must be 4-D"),
            ((q[:, :6], k[:, :4], v[:, :4]), {}, r"q's 6 heads must be a multiple of k and v's 4"),
            ((q, k, v[:, :, :8]), {}, "k and v must have one shape"),
            ((q, k[..., :32], v[..., :32]), {}, "k and v have head_dim 32 but q has 64"),
            ((q, k, v), {"scale": 0.0}, "scale must be finite and > 0"),
            ((q, k, v), {"variant": "fastest"}, r"unknown variant 'fastest' \(known: manual, decode_splitk"),
            ((q.float(), k.float(), v.float()), {"variant": "decode_splitk"},
             "decode_splitk does not support this problem: fp32 is not supported"),
        ]
        for args, kwargs, message in cases:
            with self.subTest(message=message):
                with self.assertRaisesRegex(RuntimeError, "solbench::attention: .*" + message):
                    solbench.attention(*args, **kwargs)


class PagedAttentionGpu(GpuOpsTest):
    """solbench.attention over a paged cache against the fp64 reference of each sequence's own K and V, with
    FlashAttention's rule; the rows no sequence owns hold NaN."""

    def run_batch(self, dtype, heads_q, heads_kv, q_len, lens, page_size, head_dim=128, causal=True, **kwargs):
        q = torch.randn(len(lens), heads_q, q_len, head_dim, device="cuda", dtype=dtype)
        ks = [torch.randn(heads_kv, n, head_dim, device="cuda", dtype=dtype) for n in lens]
        vs = [torch.randn_like(k) for k in ks]
        k_cache, v_cache, table, seq_lens = paged_cache(ks, vs, page_size)
        o = solbench.attention(q, k_cache, v_cache, causal=causal, block_table=table, seq_lens=seq_lens, **kwargs)
        self.assertEqual((o.shape, o.dtype), (q.shape, q.dtype))
        for b in range(len(lens)):
            with self.subTest(sequence=b, keys=lens[b]):
                assert_attention_close(self, o[b:b + 1], q[b:b + 1], ks[b][None], vs[b][None], causal,
                                       kwargs.get("scale"))
        return q, k_cache, v_cache, table, seq_lens

    def test_ragged_batches_against_the_fp64_reference(self):
        for dtype in (torch.bfloat16, torch.float16):
            for page_size in (16, 64, 256):
                with self.subTest(dtype=dtype, page_size=page_size):
                    self.run_batch(dtype, 32, 8, 1, [1, 17, 300, 4097, page_size, 2 * page_size + 1], page_size)

    def test_speculative_decode_gqa_scale_and_host_lengths(self):
        lens = [5, 1000, 77]
        self.run_batch(torch.bfloat16, 8, 2, 4, lens, 16, causal=True, scale=0.2)
        self.run_batch(torch.bfloat16, 8, 1, 1, lens, 64, head_dim=64,
                       seq_lens_cpu=torch.tensor(lens, dtype=torch.int32))

    def test_an_fp8_cache(self):
        """An e4m3 cache (bytes as uint8 views, the unowned rows e4m3 NaN) against the fp64 reference of its
        values, K / 2^-6 and V / 2^-5 rounded to e4m3 (powers of two: the dequantized values are exact in the
        dtype, the reference sees them exactly)."""
        k_scale, v_scale = 2.0 ** -6, 2.0 ** -5
        for dtype in (torch.bfloat16, torch.float16):
            for page_size in (16, 64):
                with self.subTest(dtype=dtype, page_size=page_size):
                    lens = [1, 300, 4097, 2 * page_size + 1]
                    q = torch.randn(len(lens), 32, 1, 128, device="cuda", dtype=dtype)
                    k8 = [(torch.randn(8, n, 128, device="cuda") / k_scale).to(torch.float8_e4m3fn) for n in lens]
                    v8 = [(torch.randn(8, n, 128, device="cuda") / v_scale).to(torch.float8_e4m3fn) for n in lens]
                    k_cache, v_cache, table, seq_lens = paged_cache([k.view(torch.uint8) for k in k8],
                                                                    [v.view(torch.uint8) for v in v8], page_size,
                                                                    unowned=0x7f)
                    o = solbench.attention(q, k_cache.view(torch.float8_e4m3fn), v_cache.view(torch.float8_e4m3fn),
                                           block_table=table, seq_lens=seq_lens, k_scale=k_scale, v_scale=v_scale)
                    for b in range(len(lens)):
                        k, v = k8[b].to(dtype) * k_scale, v8[b].to(dtype) * v_scale
                        assert_attention_close(self, o[b:b + 1], q[b:b + 1], k[None], v[None], True)
        with self.assertRaisesRegex(RuntimeError, "k_scale and v_scale scale an FP8 cache"):
            self.run_batch(torch.bfloat16, 8, 2, 1, [20], 16, k_scale=0.5)

    def test_every_variant_by_name(self):
        for name in solbench.variants("paged_attention"):
            with self.subTest(variant=name):
                self.run_batch(torch.bfloat16, 32, 8, 1, [3, 2000, 129], 16, variant=name)

    def test_opcheck(self):
        q = torch.randn(2, 8, 1, 128, device="cuda", dtype=torch.bfloat16)
        ks = [torch.randn(2, n, 128, device="cuda", dtype=torch.bfloat16) for n in (40, 300)]
        k_cache, v_cache, table, lens = paged_cache(ks, [torch.randn_like(k) for k in ks], 16)
        k_cache, v_cache = k_cache.nan_to_num(0.0), v_cache.nan_to_num(0.0)  # opcheck compares outputs by value
        torch.library.opcheck(torch.ops.solbench.paged_attention.default,
                              (q, k_cache, v_cache, table, lens, lens.cpu(), True, None, "auto"))

    def test_bad_inputs_raise_naming_what_is_wrong(self):
        q = torch.randn(2, 8, 1, 128, device="cuda", dtype=torch.bfloat16)
        ks = [torch.randn(2, n, 128, device="cuda", dtype=torch.bfloat16) for n in (40, 300)]
        k_cache, v_cache, table, lens = paged_cache(ks, ks, 16)
        good = dict(q=q, k=k_cache, v=v_cache, block_table=table, seq_lens=lens)
        cases = [
            ({"block_table": table.long()}, "block_table must be int32, got Long"),
            ({"seq_lens": lens.cpu()}, "seq_lens is on cpu"),
            ({"seq_lens": lens[:1]}, "q has batch 2 but block_table has 2 rows and seq_lens 1 entries"),
            ({"k": k_cache.transpose(1, 2)}, "k_cache and v_cache must be 4-D .* of one shape"),
            ({"k": k_cache[..., :64], "v": v_cache[..., :64]}, "k_cache must be contiguous"),
            ({"v": v_cache.half()}, "v_cache has dtype Half but q has BFloat16"),
            ({"q": q[:, :5]}, "q's 5 heads must be a multiple of the caches' 2"),
            ({"seq_lens_cpu": torch.tensor([40, 400], dtype=torch.int32)}, "seq_lens"),
            ({"seq_lens_cpu": lens}, "seq_lens_cpu is on cuda"),
            ({"scale": -1.0}, "scale must be finite and > 0"),
            ({"variant": "fastest"}, "unknown variant 'fastest'"),
            ({"q": torch.randn(2, 8, 9, 128, device="cuda", dtype=torch.bfloat16)}, "q_len"),
        ]
        for change, message in cases:
            with self.subTest(message=message):
                args = {**good, **change}
                q_, k_, v_ = args.pop("q"), args.pop("k"), args.pop("v")
                with self.assertRaisesRegex(RuntimeError, "solbench::paged_attention: .*" + message):
                    solbench.attention(q_, k_, v_, **args)


class CompileGpu(GpuOpsTest):
    def test_a_llama_block_compiles_whole_and_matches_eager(self):
        block = LlamaBlock(device="cuda", dtype=torch.bfloat16)
        x = torch.randn(2, 128, 512, device="cuda", dtype=torch.bfloat16)
        with torch.no_grad():
            eager = block(x)
        torch.testing.assert_close(compiled_whole(self, block, x, "inductor"), eager, rtol=1.6e-2, atol=1e-2)

    def test_a_llama_block_trains_compiled_whole_like_eager(self):
        """A training step's forward and loss.backward() of a bf16 block with solbench.nn.RMSNorm (attention by
        SDPA, which has a backward), compiled whole by inductor: its output and every gradient (the input's and
        each parameter's) against the same block in fp32 by FlashAttention's rule, max |compiled - fp32| <=
        2 max |eager bf16 - fp32| + 1e-5: compiling may reorder the rounding, not add error beyond eager's."""
        torch._dynamo.reset()
        block = LlamaBlock(device="cuda", dtype=torch.bfloat16, attention=sdpa_gqa)
        for norm in (block.attn_norm, block.mlp_norm):
            torch.nn.init.normal_(norm.weight, 1.0, 0.5)  # weights away from ones, so that dw matters
        reference = copy.deepcopy(block).float()
        x = torch.randn(2, 128, 512, device="cuda", dtype=torch.bfloat16)
        target = torch.randn(x.shape, device="cuda")

        def step(module, x, run=None):
            """The output of run (module itself by default) and the gradients of (output * target).sum(): the
            input's, then each of module's parameters'."""
            x = x.detach().requires_grad_()
            module.zero_grad(set_to_none=True)
            y = (module if run is None else run)(x)
            (y.float() * target).sum().backward()
            return {"output": y.detach(), "x": x.grad, **{n: p.grad for n, p in module.named_parameters()}}

        explained = torch._dynamo.explain(block)(x.detach().requires_grad_())
        self.assertEqual(explained.graph_break_count, 0, explained.break_reasons)
        compiled = step(block, x, torch.compile(block, backend="inductor", fullgraph=True))
        eager, fp32 = step(block, x), step(reference, x.float())
        self.assertEqual(set(compiled), {"output", "x", "attn_norm.weight", "wqkv.weight", "wo.weight",
                                         "mlp_norm.weight", "gate_up.weight", "down.weight"})
        for name, ref in fp32.items():
            with self.subTest(tensor=name):
                ours = (compiled[name].double() - ref.double()).abs().max().item()
                bound = 2 * (eager[name].double() - ref.double()).abs().max().item() + 1e-5
                self.assertLessEqual(ours, bound, f"max |compiled - fp32| {ours:.3g} > 2 max |eager - fp32| + 1e-5")



if __name__ == "__main__":
    ctest_main.main(__name__, __file__)
