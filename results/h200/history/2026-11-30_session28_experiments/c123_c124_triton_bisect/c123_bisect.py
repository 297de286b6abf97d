#!/usr/bin/env python3
"""Session 28, c123: what makes torch.compile's RMSNorm kernel faster than `vectorized` at 32768 x 8192.

Sessions 7-8 ported Inductor's structure into CUDA and lost every time, while Inductor's own kernel stays
~5% ahead (session 25, c108, one process under v26). This walks the other way: from a Triton kernel of
Inductor's form (two passes over the row in 2048-element chunks, 512 threads, one row a program, x loaded
with evict_last then evict_first, w with evict_last) towards ours, one property at a time, all timed in
one process under the harness's v26 protocol (scripts/timing_probe.py's harness_reset_b4) beside the real
torch.compile kernel, the suite's `vectorized` (probe library) and a D2D copy.

Each Triton variant is checked against torch.rms_norm in fp32 before it is timed.
"""
import json
import statistics
import sys

sys.path.insert(0, "scripts")
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import timing_probe as tp  # noqa: E402
from crosscheck_torch import cudart, host_us, sm_clock_mhz  # noqa: E402


@triton.jit
def two_pass(x_ptr, w_ptr, y_ptr, N: tl.constexpr, RB: tl.constexpr, P1: tl.constexpr, P2X: tl.constexpr,
             P2W: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    r = tl.arange(0, RB)
    acc = tl.zeros([RB], dtype=tl.float32)
    for off in tl.static_range(0, N, RB):
        v = tl.load(x_ptr + row * N + off + r, eviction_policy=P1).to(tl.float32)
        acc += v * v
    rstd = 1.0 / tl.sqrt(tl.sum(acc, 0) / N + 1e-6)
    for off in tl.static_range(0, N, RB):
        wv = tl.load(w_ptr + off + r, eviction_policy=P2W).to(tl.float32)
        v = tl.load(x_ptr + row * N + off + r, eviction_policy=P2X).to(tl.float32)
        out = (v * rstd).to(tl.bfloat16).to(tl.float32) * wv
        tl.store(y_ptr + row * N + off + r, out.to(tl.bfloat16))


@triton.jit
def one_pass(x_ptr, w_ptr, y_ptr, N: tl.constexpr, P: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    r = tl.arange(0, N)
    v = tl.load(x_ptr + row * N + r, eviction_policy=P).to(tl.float32)
    wv = tl.load(w_ptr + r).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(v * v, 0) / N + 1e-6)
    out = (v * rstd).to(tl.bfloat16).to(tl.float32) * wv
    tl.store(y_ptr + row * N + r, out.to(tl.bfloat16))


# name: (kernel, constexprs, num_warps)
VARIANTS = {
    "tri_inductor": ("two", dict(RB=2048, P1="evict_last", P2X="evict_first", P2W="evict_last"), 16),
    "tri_nohint": ("two", dict(RB=2048, P1="", P2X="", P2W=""), 16),
    "tri_p1last": ("two", dict(RB=2048, P1="evict_last", P2X="", P2W=""), 16),
    "tri_p2first": ("two", dict(RB=2048, P1="", P2X="evict_first", P2W="evict_last"), 16),
    "tri_inductor_w8": ("two", dict(RB=2048, P1="evict_last", P2X="evict_first", P2W="evict_last"), 8),
    "tri_inductor_w4": ("two", dict(RB=2048, P1="evict_last", P2X="evict_first", P2W="evict_last"), 4),
    "tri_inductor_w8_rb1024": ("two", dict(RB=1024, P1="evict_last", P2X="evict_first", P2W="evict_last"), 8),
    "tri_inductor_w16_rb4096": ("two", dict(RB=4096, P1="evict_last", P2X="evict_first", P2W="evict_last"), 16),
    "tri_inductor_w32": ("two", dict(RB=2048, P1="evict_last", P2X="evict_first", P2W="evict_last"), 32),
    "tri_nohint_w8": ("two", dict(RB=2048, P1="", P2X="", P2W=""), 8),
    "tri_onepass_w16": ("one", dict(P=""), 16),
    "tri_onepass_w8": ("one", dict(P=""), 8),
    "tri_onepass_w4": ("one", dict(P=""), 4),
    "tri_onepass_last_w16": ("one", dict(P="evict_last"), 16),
    "tri_onepass_last_w8": ("one", dict(P="evict_last"), 8),
}


def triton_call(name, x, w, y):
    kind, consts, warps = VARIANTS[name]
    rows, n = x.shape
    if kind == "two":
        return lambda: two_pass[(rows,)](x, w, y, N=n, num_warps=warps, num_stages=1, **consts)
    return lambda: one_pass[(rows,)](x, w, y, N=n, num_warps=warps, num_stages=1, **consts)


def main():
    lib_path = sys.argv[2]
    out_path = sys.argv[1]
    shapes = [(32768, 8192), (16384, 4096)]
    calls = ["copy", "compiled", "vectorized"] + list(VARIANTS)
    lib = tp.probe_lib(lib_path)
    torch._dynamo.config.cache_size_limit = 64
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    ctx = {"rt": cudart(), "l2": l2, "l2buf": torch.empty(l2 // 4, dtype=torch.int32, device="cuda"),
           "big": torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")}
    import ctypes
    ctx["rt"].cudaMemsetAsync.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
    stream = torch.cuda.Stream()
    rows_out = []
    for r, h in shapes:
        fns = {}
        with torch.cuda.stream(stream):
            for c in calls:
                if c.startswith("tri_"):
                    x = torch.randn(r, h, device="cuda", dtype=torch.bfloat16)
                    w = torch.randn(h, device="cuda", dtype=torch.bfloat16) * 0.5 + 1
                    y = torch.full_like(x, float("nan"))
                    fn = triton_call(c, x, w, y)
                    fn()
                    torch.cuda.synchronize()
                    want = torch.rms_norm(x.float(), (h,), w.float(), 1e-6)
                    bad = ((y.float() - want).abs() > 4 * 2.0 ** -8 * want.abs().clamp_min(1e-3)).sum().item()
                    if bad or not torch.isfinite(y).all():
                        raise SystemExit(f"{c} {r}x{h}: {bad} elements off the reference")
                    fns[c] = fn
                else:
                    fns[c] = tp.make_call(torch, c, r, h, lib)
                for _ in range(3):
                    fns[c]()
            torch.cuda.synchronize()
            mhz = sm_clock_mhz(torch)
            res, clk, hold = {}, {}, {}
            for c in calls:
                hold[c] = min(2 * host_us(torch, fns[c], calls=21), 1000.0)
            for rnd in range(3):
                order = calls if rnd % 2 == 0 else list(reversed(calls))
                for c in order:
                    ctx["hold_cycles"] = int(hold[c] * mhz)
                    res.setdefault(c, []).append(tp.measure(torch, "harness_reset_b4", fns[c], ctx, iters=100))
                    clk.setdefault(c, []).append(sm_clock_mhz(torch))
        base = statistics.median(res["vectorized"])
        for c in calls:
            med = statistics.median(res[c])
            row = {"shape": f"{r}x{h}", "call": c, "us": med, "rounds_us": res[c],
                   "sm_mhz": statistics.median(clk[c]), "hold_us": hold[c], "vs_vectorized": med / base}
            rows_out.append(row)
            print(f"{r}x{h} {c:22s} {med:8.2f} us  rounds {' '.join(f'{v:.2f}' for v in res[c])}  "
                  f"{row['sm_mhz']:.0f} MHz hold {hold[c]:.0f} us  x{med / base:.3f} of vectorized", flush=True)
        del fns
        torch.cuda.empty_cache()
    with open(out_path, "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                   "protocol": "harness_reset_b4 (v26), hold twice the call's host time, 100 launches a measurement, 3 rounds alternating",
                   "rows": rows_out}, f, indent=1)


if __name__ == "__main__":
    main()
