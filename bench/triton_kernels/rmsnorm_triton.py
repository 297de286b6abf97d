"""triton: RMSNorm written in Triton as a PyTorch user writes it, the ladder's step outside CUDA C++ (bench_torch's
`triton` rows; scripts/sbreport/worth.py counts its lines).
One program per row. A row of up to MAX_BLOCK elements is loaded once, squared and summed in fp32, and written
as x * rstd * w from the same registers; a longer row is read twice (the sum of squares, then the output), its
second read mostly from L2. Traffic: x read once (twice past MAX_BLOCK), y written once, w read by every program
(from L2 after the first). Any hidden size, contiguous rows; the output is a new tensor, as PyTorch's is.
Against the CUDA variants (kernels/rmsnorm/): no vector width chosen by hand, no rows sharing a program, no
decode row split over programs: Triton chooses the access width and the layout.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK = 8192  # elements a program holds at once


@triton.jit
def _rms_norm_row(x_ptr, w_ptr, y_ptr, hidden, eps, BLOCK: tl.constexpr, ONE_PASS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * hidden, y_ptr + row * hidden
    cols = tl.arange(0, BLOCK)
    if ONE_PASS:
        mask = cols < hidden
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / hidden + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, hidden, BLOCK):
            mask = start + cols < hidden
            x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
            acc += x * x
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / hidden + eps)
        for start in range(0, hidden, BLOCK):
            mask = start + cols < hidden
            x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(y_row + start + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def num_warps(block: int) -> int:
    """Warps a program: more for longer rows, so that each thread holds a few 16-byte vectors (Liger-Kernel's
    rule, up to MAX_BLOCK)."""
    return 16 if block >= 8192 else 8 if block >= 2048 else 4


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """rms_norm(x) * w over the last dimension of a contiguous [rows, hidden] x; w [hidden], one dtype."""
    rows, hidden = x.shape
    y = torch.empty_like(x)
    block = min(triton.next_power_of_2(hidden), MAX_BLOCK)
    _rms_norm_row[(rows,)](x, w, y, hidden, eps, BLOCK=block, ONE_PASS=hidden <= block, num_warps=num_warps(block))
    return y
