"""triton: the fused residual-add + RMSNorm in Triton, in place as vLLM's fused_add_rms_norm (bench_torch's `triton`
rows of fused_add_rmsnorm; scripts/sbreport/worth.py counts its lines): residual <- x + residual, rounded to the
dtype once; x <- rms_norm(residual) * w, the residual normalized as stored.
One program per row. A row of up to MAX_BLOCK elements is read once and both outputs written from registers; a
longer row is read twice, the sum of squares first, then the add again and both outputs (the inputs are
overwritten only in the second pass, so no program reads what it wrote). Traffic: x and residual read once
(twice past MAX_BLOCK), both written once, w read by every program.
Against rmsnorm_triton.py: the add, its rounding and the second output; each file stands alone.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK = 8192  # elements a program holds at once


@triton.jit
def _fused_add_rms_norm_row(x_ptr, r_ptr, w_ptr, hidden, eps, BLOCK: tl.constexpr, ONE_PASS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, r_row = x_ptr + row * hidden, r_ptr + row * hidden
    cols = tl.arange(0, BLOCK)
    dtype = r_ptr.dtype.element_ty
    if ONE_PASS:
        mask = cols < hidden
        s = (tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
             + tl.load(r_row + cols, mask=mask, other=0.0).to(tl.float32)).to(dtype)
        tl.store(r_row + cols, s, mask=mask)
        s = s.to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(s * s, axis=0) / hidden + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(x_row + cols, (s * rstd * w).to(dtype), mask=mask)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, hidden, BLOCK):
            mask = start + cols < hidden
            s = (tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
                 + tl.load(r_row + start + cols, mask=mask, other=0.0).to(tl.float32)).to(dtype).to(tl.float32)
            acc += s * s
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / hidden + eps)
        for start in range(0, hidden, BLOCK):
            mask = start + cols < hidden
            s = (tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
                 + tl.load(r_row + start + cols, mask=mask, other=0.0).to(tl.float32)).to(dtype)
            tl.store(r_row + start + cols, s, mask=mask)
            w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(x_row + start + cols, (s.to(tl.float32) * rstd * w).to(dtype), mask=mask)


def fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor, w: torch.Tensor, eps: float) -> None:
    """In place: residual += x, then x = rms_norm(residual) * w; contiguous [rows, hidden], w [hidden], one dtype."""
    rows, hidden = x.shape
    block = min(triton.next_power_of_2(hidden), MAX_BLOCK)
    warps = 16 if block >= 8192 else 8 if block >= 2048 else 4  # rmsnorm_triton.py's rule
    _fused_add_rms_norm_row[(rows,)](x, residual, w, hidden, eps, BLOCK=block, ONE_PASS=hidden <= block,
                                     num_warps=warps)
