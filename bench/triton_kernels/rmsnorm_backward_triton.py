"""triton: the RMSNorm backward in Triton (bench_torch's `triton` rows of rmsnorm_backward; scripts/sbreport/worth.py
counts its lines). With y = x * rstd * w per row (rstd the forward's saved 1 / rms, fp32) and g = dy * w:
    dx = rstd * (g - x * rstd^2 * mean(g * x))      dw = sum over rows of dy * x * rstd
Two kernels, as the suite's two_kernel variant, and deterministic: no atomics. The first runs a program per group
of rows (a few programs an SM): each row's dx from one read of x and dy (two past MAX_BLOCK), and the group's dw
partial, kept in registers across its rows (in a scratch row of its own past MAX_BLOCK), then written once. The
second sums the groups' partials column by column in group order: the same bits on every run.
Traffic: x and dy read once, dx written once, w and rstd read; the partials, a row a group, written and read once.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK = 8192  # elements a program holds at once


@triton.jit
def _dx_and_dw_partials(x_ptr, w_ptr, dy_ptr, rstd_ptr, dx_ptr, part_ptr, rows, hidden,
                        ROWS_PER_PROGRAM: tl.constexpr, CHUNKS: tl.constexpr, BLOCK: tl.constexpr):
    group = tl.program_id(0)
    first = group * ROWS_PER_PROGRAM
    cols = tl.arange(0, BLOCK)
    dtype = dx_ptr.dtype.element_ty
    part_row = part_ptr + group.to(tl.int64) * hidden
    if CHUNKS == 1:
        mask = cols < hidden
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        dw = tl.zeros([BLOCK], dtype=tl.float32)
        for i in range(0, ROWS_PER_PROGRAM):
            r = first + i
            if r < rows:
                offset = r.to(tl.int64) * hidden
                x = tl.load(x_ptr + offset + cols, mask=mask, other=0.0).to(tl.float32)
                dy = tl.load(dy_ptr + offset + cols, mask=mask, other=0.0).to(tl.float32)
                rstd = tl.load(rstd_ptr + r)
                g = dy * w
                dot = tl.sum(g * x, axis=0) / hidden
                tl.store(dx_ptr + offset + cols, (rstd * (g - x * (rstd * rstd * dot))).to(dtype), mask=mask)
                dw += dy * x * rstd
        tl.store(part_row + cols, dw, mask=mask)
    else:
        for c in range(0, CHUNKS):  # the group's partial starts at 0
            tl.store(part_row + c * BLOCK + cols, tl.zeros([BLOCK], dtype=tl.float32), mask=c * BLOCK + cols < hidden)
        tl.debug_barrier()  # the partial row is read back by other threads of the program
        for i in range(0, ROWS_PER_PROGRAM):
            r = first + i
            if r < rows:
                offset = r.to(tl.int64) * hidden
                rstd = tl.load(rstd_ptr + r)
                acc = tl.zeros([BLOCK], dtype=tl.float32)
                for c in range(0, CHUNKS):
                    start = c * BLOCK
                    mask = start + cols < hidden
                    x = tl.load(x_ptr + offset + start + cols, mask=mask, other=0.0).to(tl.float32)
                    dy = tl.load(dy_ptr + offset + start + cols, mask=mask, other=0.0).to(tl.float32)
                    acc += dy * tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32) * x
                dot = tl.sum(acc, axis=0) / hidden
                for c in range(0, CHUNKS):
                    start = c * BLOCK
                    mask = start + cols < hidden
                    x = tl.load(x_ptr + offset + start + cols, mask=mask, other=0.0).to(tl.float32)
                    dy = tl.load(dy_ptr + offset + start + cols, mask=mask, other=0.0).to(tl.float32)
                    g = dy * tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
                    tl.store(dx_ptr + offset + start + cols, (rstd * (g - x * (rstd * rstd * dot))).to(dtype),
                             mask=mask)
                    part = tl.load(part_row + start + cols, mask=mask, other=0.0)
                    tl.store(part_row + start + cols, part + dy * x * rstd, mask=mask)
                tl.debug_barrier()


@triton.jit
def _sum_partials(part_ptr, dw_ptr, hidden, GROUPS: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < hidden
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for p in range(0, GROUPS):  # in group order: deterministic
        acc += tl.load(part_ptr + p * hidden + cols, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, acc.to(dw_ptr.dtype.element_ty), mask=mask)


def rms_norm_backward(dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor, rstd: torch.Tensor):
    """(dx, dw): contiguous x and dy [rows, hidden], w [hidden] of one dtype, rstd [rows] fp32 (the forward's)."""
    rows, hidden = x.shape
    block = min(triton.next_power_of_2(hidden), MAX_BLOCK)
    warps = 16 if block >= 8192 else 8 if block >= 2048 else 4  # rmsnorm_triton.py's rule
    slots = 4 * torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 4
    rows_per_program = triton.cdiv(rows, min(rows, slots))
    groups = triton.cdiv(rows, rows_per_program)
    dx = torch.empty_like(x)
    part = torch.empty((groups, hidden), dtype=torch.float32, device=x.device)
    # Rows a program and chunks a row are compile-time constants: the loops' bounds (one compile a shape, as the
    # rows time one shape at a time).
    _dx_and_dw_partials[(groups,)](x, w, dy, rstd, dx, part, rows, hidden, ROWS_PER_PROGRAM=rows_per_program,
                                   CHUNKS=triton.cdiv(hidden, block), BLOCK=block, num_warps=warps)
    dw = torch.empty_like(w)
    _sum_partials[(triton.cdiv(hidden, 1024),)](part, dw, hidden, GROUPS=groups, BLOCK=1024, num_warps=4)
    return dx, dw
