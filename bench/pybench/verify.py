"""The suite's verification rules, in torch, for the Python rows: the same tolerances, the same rows checked and
the same messages as the C++ benches' (each function names the C++ it follows). They run on any device: the driver
checks on the GPU in fp64, the tests on CPU tensors.

Where the Python rows differ from the C++ ones, and why:
- The inputs are drawn by torch's generator, not the harness's fill kernel (same distributions: x, residual, dy,
  Q, K, V ~ N(0, 1), RMSNorm's w ~ N(1, 0.5^2)); so the Python and C++ rows of a case see different numbers.
- A C++ case writes into an output it poisoned with NaN first. A PyTorch function allocates its own output, so
  the driver fills the memory the caching allocator will hand out with NaN just before the verified call
  (poisoned_allocator): unwritten elements then read NaN, as in C++, for every output the allocator serves
  from that block (most; not guaranteed). The checked rows and the NaN/Inf scan are the C++ ones.
- The attention "same-dtype" emulation runs its matrix products in fp32 on the device (TF32 off); the C++
  one sums in fp32 in order. Both round where PyTorch's composite rounds; their fp32 sums differ far below the
  dtype's rounding.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

U32 = 2.0 ** -24
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
# common/dtype.h: unit_roundoff, min_subnormal; the significand bits and the smallest subnormal's exponent
# (ref/cpu/fused_add_rmsnorm_ref.cpp's round_to_dtype).
UNIT_ROUNDOFF = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}
MIN_SUBNORMAL = {torch.float32: 2.0 ** -149, torch.float16: 2.0 ** -24, torch.bfloat16: 2.0 ** -133}
_ROUNDING = {torch.float32: (24, -149, 3.4028234663852886e38), torch.float16: (11, -24, 65504.0),
             torch.bfloat16: (8, -133, 255.0 * 2.0 ** 120)}
CHUNK_ELEMENTS = 1 << 23  # fp64 temporaries of one chunk: 64 MiB each


@dataclass
class Check:
    """bench/verify.h's Check: ok, the error over the tolerance (<= 1 passes), the first failure's message."""
    ok: bool = True
    err: float = 0.0
    message: str = ""


def rows_to_check(rows: int, full: int, sampled: int) -> list:
    """rmsnorm_case.cu's rows_to_check: every row up to `full`, else `sampled` evenly spaced rows plus the last."""
    if rows <= full:
        return list(range(rows))
    step = rows // sampled
    out = [i * step for i in range(sampled)]
    if out[-1] != rows - 1:
        out.append(rows - 1)
    return out


def error_vs_tolerance(got: torch.Tensor, want: torch.Tensor, tol: torch.Tensor) -> torch.Tensor:
    """rmsnorm_case.cu's error_vs_tolerance, elementwise: |got - want| / tol; a NaN reference is matched by NaN
    only, an infinite one by the same infinity, a finite one by a finite value (anything else: infinity)."""
    inf = torch.full_like(want, math.inf)
    err = torch.where(torch.isfinite(got), (got - want).abs() / tol, inf)
    err = torch.where(torch.isinf(want), torch.where(got == want, torch.zeros_like(err), inf), err)
    return torch.where(torch.isnan(want), torch.where(torch.isnan(got), torch.zeros_like(err), inf), err)


def rmsnorm_tolerance(dtype: torch.dtype, hidden: int, ref: torch.Tensor) -> torch.Tensor:
    """rmsnorm_case.cu's rmsnorm_tolerance: 4 unit roundoffs of the output dtype, plus what fp32 accumulation of
    `hidden` squares adds (u32 * (16 + 4 sqrt(hidden))), relative to |ref|; plus one ulp at zero."""
    rel = 4.0 * UNIT_ROUNDOFF[dtype] + U32 * (16.0 + 4.0 * math.sqrt(hidden))
    return ref.abs() * rel + 2.0 * MIN_SUBNORMAL[dtype]


def rmsnorm_reference(x64: torch.Tensor, w64: torch.Tensor, eps: float) -> torch.Tensor:
    """ref/cpu/rmsnorm_ref.cpp: y = x / sqrt(mean(x^2) + eps) * w, in fp64, row by row."""
    rms = torch.sqrt((x64 * x64).sum(-1, keepdim=True) / x64.shape[-1] + eps)
    return x64 / rms * w64


def round_to_dtype(v: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """ref/cpu/fused_add_rmsnorm_ref.cpp's round_to_dtype on fp64 values: to the nearest value of `dtype` (ties to
    even, subnormals included), past its largest finite value to infinity; 0, Inf and NaN unchanged."""
    bits, min_exp, max_finite = _ROUNDING[dtype]
    _, e = torch.frexp(v)
    ulp_exp = torch.clamp(e.to(torch.int64) - bits, min=min_exp).to(v.dtype)
    r = torch.ldexp(torch.round(torch.ldexp(v, -ulp_exp)), ulp_exp)
    r = torch.where(r.abs() > max_finite, torch.copysign(torch.full_like(r, math.inf), v), r)
    return torch.where(torch.isfinite(v) & (v != 0), r, v)


def _chunks(n_rows: int, hidden: int):
    step = max(1, CHUNK_ELEMENTS // max(hidden, 1))
    for start in range(0, n_rows, step):
        yield start, min(n_rows, start + step)


def _record(c: Check, err: torch.Tensor, rows: list, first: int, what: str, got, want, tol) -> None:
    """Adds a chunk's errors (rows first.. of `rows`) to c: the largest, and where it is over 1 the message of
    rmsnorm_case.cu's verify() at that element."""
    e_max, at = err.reshape(-1).max(0)
    e_max = float(e_max)
    if e_max <= c.err:
        return
    c.err = e_max
    if e_max > 1.0:
        i, j = divmod(int(at), err.shape[-1])
        c.ok = False
        c.message = (f"{what}row {rows[first + i]} col {j}: got {float(got[i, j]):.9g}, reference "
                     f"{float(want[i, j]):.9g} (error {e_max:.3g} x tolerance {float(tol[i, j]):.3g})")


def fail_if_nonfinite(c: Check, t: torch.Tensor, what: str) -> None:
    """rmsnorm_case.cu's fail_if_nonfinite: fails c if any element of t is NaN or Inf (the poison left unwritten)."""
    bad = int((~torch.isfinite(t)).sum())
    if bad:
        c.ok, c.err = False, math.inf
        c.message = f"{bad} {what} element(s) are NaN/Inf (unwritten or overflowed); inputs are finite"


def check_rmsnorm(x: torch.Tensor, w: torch.Tensor, y: torch.Tensor, eps: float) -> Check:
    """RmsNormData::verify: y = rms_norm(x) * w within rmsnorm_tolerance at every element of the checked rows
    (all up to 4096 rows, else 1024 evenly spaced plus the last, with a scan of y for NaN/Inf)."""
    n_rows, hidden = x.shape
    rows = rows_to_check(n_rows, 4096, 1024)
    c, w64 = Check(), w.double()
    for a, b in _chunks(len(rows), hidden):
        idx = torch.tensor(rows[a:b], device=x.device)
        ref = rmsnorm_reference(x[idx].double(), w64, eps)
        got = y[idx].double()
        tol = rmsnorm_tolerance(x.dtype, hidden, ref)
        _record(c, error_vs_tolerance(got, ref, tol), rows, a, "", got, ref, tol)
    if c.ok and len(rows) < n_rows:
        fail_if_nonfinite(c, y, "output")
    return c


def check_fused_add_rmsnorm(x_in, residual_in, w, x_out, residual_out, eps: float) -> Check:
    """FusedAddRmsNormData::verify: after one in-place run from (x_in, residual_in), residual_out equals
    round(x_in + residual_in) exactly and x_out is rms_norm(residual_out) * w within rmsnorm_tolerance, at every
    element of the checked rows (all rows up to 4096 rows or 2^24 elements, else 1024 evenly spaced plus the
    last, with a scan of both outputs for NaN/Inf)."""
    n_rows, hidden = x_in.shape
    full = n_rows <= 4096 or n_rows * hidden <= 1 << 24
    rows = rows_to_check(n_rows, n_rows, 1) if full else rows_to_check(n_rows, 0, 1024)
    c, w64 = Check(), w.double()
    for a, b in _chunks(len(rows), hidden):  # the residual, one rounded add: exact
        idx = torch.tensor(rows[a:b], device=x_in.device)
        want = round_to_dtype(x_in[idx].double() + residual_in[idx].double(), x_in.dtype)
        got = residual_out[idx].double()
        differs = ~((got == want) | (torch.isnan(got) & torch.isnan(want)))
        if bool(differs.any()):
            i, j = divmod(int(differs.reshape(-1).nonzero()[0]), hidden)
            return Check(False, math.inf, f"residual row {rows[a + i]} col {j}: got {float(got[i, j]):.9g}, "
                                          f"reference {float(want[i, j]):.9g} (error inf x tolerance)")
    for a, b in _chunks(len(rows), hidden):
        idx = torch.tensor(rows[a:b], device=x_in.device)
        ref = rmsnorm_reference(round_to_dtype(x_in[idx].double() + residual_in[idx].double(), x_in.dtype), w64, eps)
        got = x_out[idx].double()
        tol = rmsnorm_tolerance(x_in.dtype, hidden, ref)
        _record(c, error_vs_tolerance(got, ref, tol), rows, a, "x ", got, ref, tol)
    if c.ok and len(rows) < n_rows:
        for name, t in (("x", x_out), ("residual", residual_out)):
            fail_if_nonfinite(c, t, name)
            if not c.ok:
                break
    return c


def rmsnorm_backward_dx_tolerance(dtype, hidden: int, ref, scale):
    """rmsnorm_backward_case.cu: 4 unit roundoffs of |ref| plus 3 u32 (16 + 4 sqrt(hidden)) times the magnitude
    of dx's terms, plus one ulp at zero."""
    return (4.0 * UNIT_ROUNDOFF[dtype] * ref.abs() + 3.0 * U32 * (16.0 + 4.0 * math.sqrt(hidden)) * scale
            + 2.0 * MIN_SUBNORMAL[dtype])


def rmsnorm_backward_dw_tolerance(dtype, rows: int, hidden: int, ref, abs_sum):
    """rmsnorm_backward_case.cu: 4 unit roundoffs of |ref| plus u32 (8 sqrt(rows) + 18 + 4 sqrt(hidden)) times
    the sum of |dy * x̂| over the rows, plus one ulp at zero."""
    return (4.0 * UNIT_ROUNDOFF[dtype] * ref.abs()
            + U32 * (8.0 * math.sqrt(rows) + 18.0 + 4.0 * math.sqrt(hidden)) * abs_sum + 2.0 * MIN_SUBNORMAL[dtype])


def rmsnorm_backward_reference(x64, w64, dy64, eps: float):
    """ref/cpu/rmsnorm_backward_ref.cpp for a block of rows, in fp64: (dx, dx_scale, the rows' dw terms summed,
    their magnitudes summed). rstd = 1 / sqrt(mean(x^2) + eps), x̂ = x rstd, g = w dy, m = mean(x̂ g):
    dx = rstd (g - x̂ m), dx_scale = rstd (|g| + |x̂| (|m| + mean|x̂ g|)), dw = sum dy x̂."""
    hidden = x64.shape[-1]
    rstd = 1.0 / torch.sqrt((x64 * x64).sum(-1, keepdim=True) / hidden + eps)
    xhat, g = x64 * rstd, w64 * dy64
    xg = xhat * g
    m, mean_abs = xg.sum(-1, keepdim=True) / hidden, xg.abs().sum(-1, keepdim=True) / hidden
    dx = rstd * (g - xhat * m)
    scale = rstd * (g.abs() + xhat.abs() * (m.abs() + mean_abs))
    t = dy64 * xhat
    return dx, scale, t.sum(0), t.abs().sum(0)


def check_rmsnorm_backward(x, w, dy, dx, dw, eps: float) -> Check:
    """RmsNormBackwardData::verify: dx at every element of the checked rows (all up to 4096 rows, else 1024 evenly
    spaced plus the last, with a scan of dx for NaN/Inf), dw at every element (its reference sums every row)."""
    n_rows, hidden = x.shape
    rows = rows_to_check(n_rows, 4096, 1024)
    checked = torch.zeros(n_rows, dtype=torch.bool, device=x.device)
    checked[torch.tensor(rows, device=x.device)] = True
    position = torch.cumsum(checked.to(torch.int64), 0) - 1  # a checked row's index in `rows`
    c, w64 = Check(), w.double()
    dw_ref = torch.zeros(hidden, dtype=torch.float64, device=x.device)
    dw_abs = torch.zeros_like(dw_ref)
    for a, b in _chunks(n_rows, hidden):
        dx_ref, scale, dw_part, abs_part = rmsnorm_backward_reference(x[a:b].double(), w64, dy[a:b].double(), eps)
        dw_ref += dw_part
        dw_abs += abs_part
        keep = checked[a:b]
        if bool(keep.any()):
            got, want, s = dx[a:b][keep].double(), dx_ref[keep], scale[keep]
            tol = rmsnorm_backward_dx_tolerance(x.dtype, hidden, want, s)
            _record(c, error_vs_tolerance(got, want, tol), rows, int(position[a:b][keep][0]), "dx ", got, want, tol)
    got = dw.double().reshape(1, hidden)
    tol = rmsnorm_backward_dw_tolerance(x.dtype, n_rows, hidden, dw_ref, dw_abs).reshape(1, hidden)
    _record(c, error_vs_tolerance(got, dw_ref.reshape(1, hidden), tol), [0], 0, "dw ", got,
            dw_ref.reshape(1, hidden), tol)
    if c.ok and len(rows) < n_rows:
        fail_if_nonfinite(c, dx, "dx")
    return c


def attention_picks(batch: int, heads_q: int, q_len: int, full: int = 512, sampled: int = 32) -> list:
    """attention_case.cu's checked rows as (b, h, i): all batch * heads_q * q_len rows up to `full`, else `sampled`
    rows k (total - 1) / (sampled - 1), first and last included; r enumerates (b, h, i) with i fastest."""
    total = batch * heads_q * q_len
    rs = range(total) if total <= full else [k * (total - 1) // (sampled - 1) for k in range(sampled)]
    return [(r // (q_len * heads_q), r // q_len % heads_q, r % q_len) for r in rs]


def attention_row_references(q_row, k64, v64, k32, v32, scale: float, dtype):
    """One query row's two references over its visible keys (attention_case.cu), from the keys and values it sees
    in fp64 (k64, v64) and fp32 (k32, v32), all [visible, head_dim]: ref, fp64 attention of the dtype-rounded
    inputs; same, PyTorch's composite in the dtype (q.k summed in fp32 and rounded, times the scale in fp32 and
    rounded, softmax in fp32 rounded, p.v summed in fp32 and rounded). No visible key: both 0."""
    d = q_row.shape[-1]
    if k64.shape[0] == 0:
        z = torch.zeros(d, dtype=torch.float64, device=q_row.device)
        return z, z.clone()
    ref = torch.softmax((k64 @ q_row.double()) * scale, -1) @ v64
    dot = (k32 @ q_row.float()).to(dtype)
    s = (dot.double() * float(torch.tensor(scale, dtype=torch.float32))).float().to(dtype).float()
    e = torch.exp(s - s.max())
    p = (e / e.sum()).to(dtype)
    same = (p.float() @ v32).to(dtype).double()
    return ref, same


def check_attention(q, k, v, o, causal: bool, scale: float) -> Check:
    """AttentionData::verify with FlashAttention's rule over attention_picks' rows: max |o - ref| <= 2 max
    |same - ref| + 1e-5 (a non-finite o element counts as infinitely far), then, where rows were sampled, a scan
    of o for NaN/Inf. q, k, v, o: [batch, heads, seq, head_dim] (any strides); causal masking bottom-right."""
    batch, heads_q, q_len, d = q.shape
    heads_kv, kv_len = k.shape[1], k.shape[2]
    group = heads_q // heads_kv
    err_ours, err_same, worst = 0.0, 0.0, None
    kv_of, kv = None, None  # the (batch, kv head) whose K and V are converted: rows of one head share them
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        for b, h, i in attention_picks(batch, heads_q, q_len):
            if kv_of != (b, h // group):
                kv_of = (b, h // group)
                kv = (k[kv_of].double(), v[kv_of].double(), k[kv_of].float(), v[kv_of].float())
            visible = min(max(i + kv_len - q_len + 1, 0), kv_len) if causal else kv_len
            ref, same = attention_row_references(q[b, h, i], *(t[:visible] for t in kv), scale, q.dtype)
            got = o[b, h, i].double()
            diff = torch.where(torch.isfinite(got), (got - ref).abs(), torch.full_like(ref, math.inf))
            d_max, e = diff.max(0)
            if worst is None or float(d_max) > err_ours:
                err_ours, worst = float(d_max), (b, h, i, int(e))
            err_same = max(err_same, float((same - ref).abs().max()))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
    tolerance = 2.0 * err_same + 1e-5
    c = Check(True, err_ours / tolerance, "")
    if not err_ours <= tolerance:
        c.ok = False
        c.message = (f"max |ours - ref| = {err_ours:.3g} > 2 * max |same-dtype - ref| + 1e-5 = {tolerance:.3g} "
                     f"(b {worst[0]}, head {worst[1]}, row {worst[2]}, dim {worst[3]})")
        return c
    if len(attention_picks(batch, heads_q, q_len)) < batch * heads_q * q_len:
        bad = int((~torch.isfinite(o)).sum())
        if bad:
            c.ok, c.err = False, math.inf
            c.message = f"{bad} output element(s) are NaN/Inf (unwritten?); inputs are finite"
    return c
