"""The Python rows of the RMSNorm family: rmsnorm (forward), fused_add_rmsnorm (in place, as vLLM's) and
rmsnorm_backward, each a dict of implementation -> build(inputs, keep, tag) -> Built. `keep` is the row's dict
that outlives its inputs (its compiled function: rebuilt inputs of the same shape reuse it, not recompile it);
`tag` names its compiled copy. The inputs are the C++ cases' (bench/*_case.h): x, residual, dy ~ N(0, 1),
w ~ N(1, 0.5^2), eps 1e-6.
"""
from __future__ import annotations

import math

import torch

from . import compiled
from . import rows as rows_
from .rows import (Built, Unsupported, bind, generator, kept, nbytes, normal, poison, seed_of, solbench, solbench_op,
                   triton_module)
from .verify import Check, check_fused_add_rmsnorm, check_rmsnorm, check_rmsnorm_backward

EPS = compiled.EPS
# max-autotune without inductor's own CUDA graphs, which would put every call behind a graph launch and the hot
# mode's capture around another graph: the harness times the kernels, as for every other row.
AUTOTUNE = "max-autotune-no-cudagraphs"


class ForwardInputs:
    def __init__(self, rows: int, hidden: int, dtype: torch.dtype, seed: int):
        g = generator(seed)
        self.x = normal((rows, hidden), dtype, g)
        self.w = normal((hidden,), dtype, g, 1.0, 0.5)


def _forward(call) -> callable:
    """A forward row: `call(inputs, keep, tag)` returns its launch, whose result is y; checked on the allocator's
    NaN-filled memory."""
    def build(inp: ForwardInputs, keep: dict, tag: str, compiled_row: bool = False) -> Built:
        launch = call(inp, keep, tag)
        out_bytes = nbytes(inp.x.shape, inp.x.dtype)

        def check() -> Check:
            poison(out_bytes)
            return check_rmsnorm(inp.x, inp.w, launch(), EPS)
        return Built(launch, check, compiled=compiled_row)
    return build


def _compiled_forward(fn, mode=None):
    def call(inp, keep, tag):
        f = kept(keep, "fn", lambda: compiled.compile_fresh(fn, tag, mode))
        return lambda: f(inp.x, inp.w)
    build = _forward(call)
    return lambda inp, keep, tag: build(inp, keep, tag, compiled_row=True)


def _triton_forward(inp, keep, tag):
    rms_norm = triton_module("rmsnorm_triton").rms_norm
    return lambda: rms_norm(inp.x, inp.w, EPS)


def _op_forward(inp, keep, tag):
    rms_norm = solbench().rms_norm
    return lambda: rms_norm(inp.x, inp.w, EPS)


FORWARD = {
    "torch_compile": _compiled_forward(compiled.rms_norm),
    "torch_compile_max_autotune": _compiled_forward(compiled.rms_norm, AUTOTUNE),
    "torch_compile_composite": _compiled_forward(compiled.rms_norm_composite),
    "torch_compile_composite_max_autotune": _compiled_forward(compiled.rms_norm_composite, AUTOTUNE),
    "triton": _forward(_triton_forward),
    "solbench_op": _forward(_op_forward),
}


class FusedInputs:
    """The kept inputs (x, residual) and the working buffers the op updates in place, as FusedAddRmsNormData, each
    buffer an allocation of its own followed by a guard band that no call may write. Two allocations, not one:
    torch.compile treats inputs that share a storage as aliases of one base, which would change what it compiles."""
    GUARD_BYTES = 256
    GUARD_BYTE = 0xA5

    def __init__(self, rows: int, hidden: int, dtype: torch.dtype, seed: int):
        g = generator(seed)
        self.inputs = (normal((rows, hidden), dtype, g), normal((rows, hidden), dtype, g))
        self.w = normal((hidden,), dtype, g, 1.0, 0.5)
        size = nbytes((rows, hidden), dtype)
        self.buffers = [torch.full((size + self.GUARD_BYTES,), self.GUARD_BYTE, dtype=torch.uint8, device=rows_.DEVICE)
                        for _ in range(2)]
        self.x, self.residual = (b[:size].view(dtype).view(rows, hidden) for b in self.buffers)
        self.restore()

    def restore(self) -> None:
        """Copies the inputs into the working buffers (FusedAddRmsNormData::restore)."""
        self.x.copy_(self.inputs[0])
        self.residual.copy_(self.inputs[1])

    def check(self) -> Check:
        """After one run from restored inputs: FusedAddRmsNormData::verify, then both guard bands untouched."""
        c = check_fused_add_rmsnorm(*self.inputs, self.w, self.x, self.residual, EPS)
        for name, buffer in zip(("x", "residual"), self.buffers):
            guard = buffer[-self.GUARD_BYTES:]
            if c.ok and bool((guard != self.GUARD_BYTE).any()):
                first = int((guard != self.GUARD_BYTE).nonzero()[0])
                return Check(False, math.inf, f"byte {first} past the end of {name} was written")
        return c


def _fused(call) -> callable:
    def build(inp: FusedInputs, keep: dict, tag: str, compiled_row: bool = False) -> Built:
        launch = call(inp, keep, tag)

        def check() -> Check:
            inp.restore()
            launch()
            return inp.check()
        return Built(launch, check, restore=inp.restore, compiled=compiled_row)
    return build


def _compiled_fused(inp, keep, tag):
    f = kept(keep, "fn", lambda: compiled.compile_fresh(compiled.fused_add_rms_norm, tag))
    return lambda: f(inp.x, inp.residual, inp.w)


def _triton_fused(inp, keep, tag):
    fused = triton_module("fused_add_rmsnorm_triton").fused_add_rms_norm
    return lambda: fused(inp.x, inp.residual, inp.w, EPS)


def _op_fused(inp, keep, tag):
    """torch.ops.solbench.fused_add_rms_norm, in place (its schema writes x and residual) or returning both."""
    op = solbench_op("fused_add_rms_norm")
    kwargs, written = bind(op, {"x": inp.x, "residual": inp.residual, "weight": inp.w, "eps": EPS,
                                "variant": "auto"})
    if written == {"x", "residual"}:
        return lambda: op(**kwargs)
    if not written and len(op.default._schema.returns) == 2:
        def call():  # functional: the results land in the working buffers, where the check reads them
            x, residual = op(**kwargs)
            inp.x.copy_(x)
            inp.residual.copy_(residual)
        return call
    raise Unsupported(f"{op.default._schema}: neither in place on x and residual nor returning both")


FUSED = {
    "torch_compile": lambda inp, keep, tag: _fused(_compiled_fused)(inp, keep, tag, compiled_row=True),
    "triton": _fused(_triton_fused),
    "solbench_op": _fused(_op_fused),
}


class BackwardInputs:
    """x, w, dy and the forward's saved rstd (fp32 of the fp64 1 / rms), as RmsNormBackwardData."""

    def __init__(self, rows: int, hidden: int, dtype: torch.dtype, seed: int):
        g = generator(seed)
        self.x = normal((rows, hidden), dtype, g)
        self.w = normal((hidden,), dtype, g, 1.0, 0.5)
        self.dy = normal((rows, hidden), dtype, g)
        self.rstd = torch.empty(rows, dtype=torch.float32, device=rows_.DEVICE)
        step = max(1, (1 << 23) // hidden)
        for a in range(0, rows, step):
            x64 = self.x[a:a + step].double()
            self.rstd[a:a + step] = (1.0 / torch.sqrt((x64 * x64).sum(-1) / hidden + EPS)).float()


def _backward(call) -> callable:
    """A backward row: `call(inputs, keep, tag)` returns its launch, whose result is (dx, dw); checked on the
    allocator's NaN-filled memory."""
    def build(inp: BackwardInputs, keep: dict, tag: str, compiled_row: bool = False) -> Built:
        launch = call(inp, keep, tag)
        dx_bytes, dw_bytes = nbytes(inp.x.shape, inp.x.dtype), nbytes(inp.w.shape, inp.w.dtype)

        def check() -> Check:
            poison(dx_bytes, dw_bytes)
            dx, dw = launch()
            return check_rmsnorm_backward(inp.x, inp.w, inp.dy, dx, dw, EPS)
        return Built(launch, check, compiled=compiled_row)
    return build


def _compiled_backward(inp, keep, tag):
    """torch.compile of F.rms_norm, its backward alone timed: autograd.grad of one compiled forward's output,
    retain_graph, as the C++ torch_autograd row times at::rms_norm's (AOTAutograd compiles the backward graph at
    the first call)."""
    f = kept(keep, "fn", lambda: compiled.compile_fresh(compiled.rms_norm, tag))
    x, w = inp.x.detach().requires_grad_(), inp.w.detach().requires_grad_()
    with torch.enable_grad():
        y = f(x, w)
    return lambda: torch.autograd.grad(y, (x, w), inp.dy, retain_graph=True)


def _op_backward(inp, keep, tag):
    """torch.ops.solbench.rms_norm_backward, given the saved rstd where its schema takes one (else it recomputes
    it). The row's bytes are the problem's with the saved rstd, as for every row of the op."""
    op = solbench_op("rms_norm_backward")
    kwargs, written = bind(op, {"dy": inp.dy, "x": inp.x, "weight": inp.w, "rstd": inp.rstd, "eps": EPS,
                                "variant": "auto"})
    if written or len(op.default._schema.returns) != 2:
        raise Unsupported(f"{op.default._schema}: does not return (dx, dw)")
    return lambda: op(**kwargs)


def _triton_backward(inp, keep, tag):
    backward = triton_module("rmsnorm_backward_triton").rms_norm_backward
    return lambda: backward(inp.dy, inp.x, inp.w, inp.rstd)


BACKWARD = {
    "torch_compile": lambda inp, keep, tag: _backward(_compiled_backward)(inp, keep, tag, compiled_row=True),
    "triton": _backward(_triton_backward),
    "solbench_op": _backward(_op_backward),
}


def inputs(op: str, shape: dict, dtype: torch.dtype, name: str):
    """The inputs of op at shape (sbresults' fields) and dtype; `name` (the case name less impl and mode) seeds them."""
    make = {"rmsnorm": ForwardInputs, "fused_add_rmsnorm": FusedInputs, "rmsnorm_backward": BackwardInputs}[op]
    return make(shape["rows"], shape["hidden"], dtype, seed_of(name))


IMPLS = {"rmsnorm": FORWARD, "fused_add_rmsnorm": FUSED, "rmsnorm_backward": BACKWARD}
