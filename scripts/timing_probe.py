#!/usr/bin/env python3
"""Experiment: which step of triton's do_bench loop moves a ~10 us cold figure away from the harness's,
and where torch.compile's RMSNorm lands under each protocol.

Times PyTorch RMSNorm calls with CUDA events, on a side stream, under protocols that walk one step at a
time from do_bench's loop to the harness's (bench/harness/timer.h), interleaved over several rounds
(median of each; the SM clock after each measurement, from crosscheck_torch.sm_clock_mhz):

    do_bench            triton.testing.do_bench, median (its 256 MB zero_ flush, iterations back to back)
    loop                do_bench's loop rebuilt: zero_ 256 MB, start, call, end; one sync at the end
    loop_sync           the same, a sync after every iteration
    loop_memset         cudaMemsetAsync of the L2's size instead of the zero_ kernel, one sync at the end
    loop_memset_sync    the same, a sync after every iteration
    loop_hold           loop with the harness's hold (below) between the flush and the start event
    harness_bN          the harness: L2-sized cudaMemsetAsync, hold (a spin of twice the call's host time),
                        start, call, end, batches of N (1, 4, 16, 64), one sync a batch; N = 4 is the
                        harness's protocol
    harness_b4_zero     harness_b4 with the 256 MB zero_ in place of the memset
    harness_reset_b4    harness_b4 as protocol v26 runs it (session 24): each launch waits for the one
                        before it, then the L2's persisting lines are reset before its flush, so lines
                        loaded with an evict-last policy do not outlive the flush
    ahead_N             do_bench's loop (zero_ 256 MB, start, call, end) over 1,000 iterations back to back,
                        the host kept at most N iterations ahead of the GPU (before enqueuing iteration i it
                        waits for iteration i - N's end event); N = 16, 64, 256, 1024. The GPU's work and its
                        duty cycle are do_bench's at every N (the host's ~30 us an iteration stays ahead of
                        the GPU's ~85); only how deep the queue of enqueued work runs changes. Session 7
                        found batches of 64 reading as the harness and do_bench's 200-deep loop 0.5-1.3 us
                        slower: this separates queue depth from everything else. Also records the median
                        host time an iteration (a host blocked on a full launch queue shows as a host
                        iteration as long as the GPU's).

With --cupti, each protocol is run once more under torch.profiler, and the row records the median GPU
duration of the call's own kernels by CUPTI's timestamps (no events) beside the events' figure of that
same run: where two protocols' event figures differ and their kernel durations do not, the difference
is in the events' window around the kernel (launch and event latency), not in the kernel.

Calls: `rms_norm` (torch.rms_norm = at::rms_norm, the suite's baseline) and `compiled` (torch.compile of
the composite a PyTorch user writes: upcast, pow, mean, rsqrt, multiply, as ref/torch/torch_rmsnorm.cpp's
torch_composite; the torch.compile column of ANCHORS.md), `vectorized` (the suite's own kernel, called
through bench/probe_capi.cpp's library by ctypes on the same kind of PyTorch tensors, checked against
torch.rms_norm before it is timed: ours and Inductor's in one process under one protocol) and `copy` (a
device-to-device copy of x, what moving the bytes costs). bf16, eps 1e-6.

    python3 scripts/timing_probe.py [-o probe.json] [--shapes 256x4096,2048x2048,8192x768]
                                    [--protocols do_bench,harness_b4] [--calls rms_norm,compiled] [--cupti]
                                    [--lib build/release/bench/libsolbench_probe.so]
"""
import argparse
import ctypes
import glob
import json
import os
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from crosscheck_torch import cudart, persisting_reset  # noqa: E402

PROTOCOLS = ["do_bench", "loop", "loop_sync", "loop_memset", "loop_memset_sync", "loop_hold",
             "harness_b1", "harness_b4", "harness_b16", "harness_b64", "harness_b4_zero", "harness_reset_b4",
             "ahead_16", "ahead_64", "ahead_256", "ahead_1024"]
CALLS = ["rms_norm", "compiled", "vectorized", "copy"]


def parse_shapes(text):
    """'256x4096,2048x2048' -> [(256, 4096), (2048, 2048)]; ValueError naming the bad entry."""
    shapes = []
    for entry in text.split(","):
        parts = entry.strip().split("x")
        if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise ValueError(f"'{entry}' is not ROWSxHIDDEN with positive integers")
        shapes.append((int(parts[0]), int(parts[1])))
    return shapes


def parse_list(text, allowed, what):
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise ValueError(f"{what}: unknown {bad or 'empty list'}; choose from {', '.join(allowed)}")
    return items


def probe_lib(path):
    """bench/probe_capi.cpp's library (solbench_rmsnorm), its C signature declared."""
    lib = ctypes.CDLL(path)
    f = lib.solbench_rmsnorm
    f.argtypes = [ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_double, ctypes.c_char_p,
                  ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p,
                  ctypes.c_size_t]
    f.restype = ctypes.c_int
    return f


def find_probe_lib(root):
    """The newest libsolbench_probe.so under root/build, or None."""
    found = glob.glob(os.path.join(root, "build", "**", "libsolbench_probe.so"), recursive=True)
    return max(found, key=os.path.getmtime) if found else None


def suite_call(torch, fn, variant, x, w, y):
    """A call of the suite's RMSNorm `variant` on the current stream through the probe library; raises
    RuntimeError with the library's reason when it refuses or fails."""
    rows, hidden = x.shape
    err = ctypes.create_string_buffer(512)
    args = (variant.encode(), rows, hidden, 1e-6, b"bf16", x.data_ptr(), w.data_ptr(), y.data_ptr())

    def call():
        if fn(*args, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), err, len(err)):
            raise RuntimeError(f"solbench_rmsnorm({variant}): {err.value.decode()}")
    return call


def make_call(torch, name, rows, hidden, lib=None):
    x = torch.randn(rows, hidden, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(hidden, device="cuda", dtype=torch.bfloat16) * 0.5 + 1
    if name == "rms_norm":
        return lambda: torch.rms_norm(x, (hidden,), w, 1e-6)
    if name == "copy":  # what moving RMSNorm's bytes costs: a device-to-device cudaMemcpyAsync of x
        y = torch.empty_like(x)
        return lambda: y.copy_(x)
    if name == "vectorized":
        if lib is None:
            raise RuntimeError("the vectorized call needs the probe library (--lib; built as libsolbench_probe.so)")
        y = torch.full_like(x, float("nan"))
        call = suite_call(torch, lib, name, x, w, y)
        call()
        want = torch.rms_norm(x.float(), (hidden,), w.float(), 1e-6)
        # Verified before it is timed: within a few bf16 ulps of an fp32 reference (the suite's GPU tests
        # hold it to its fp64 reference; this guards the ctypes path, not the kernel).
        bad = ((y.float() - want).abs() > 4 * 2.0 ** -8 * want.abs().clamp_min(1e-3)).sum().item()
        if bad or not torch.isfinite(y).all():
            raise RuntimeError(f"vectorized {rows}x{hidden} through the probe library: {bad} elements off the reference")
        return call

    def composite(x, w):
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        return w * h.to(x.dtype)

    compiled = torch.compile(composite, dynamic=False)
    return lambda: compiled(x, w)


def ahead_loop(torch, fn, flush, ahead, iters=1000):
    """do_bench's loop with the host at most `ahead` iterations ahead of the GPU (ahead_N in the module
    docstring). Returns (median us of the call, median host us an iteration)."""
    import time
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    host = []
    torch.cuda.synchronize()
    for i in range(iters):
        if i >= ahead:
            ends[i - ahead].synchronize()
        t = time.perf_counter()
        flush()
        starts[i].record()
        fn()
        ends[i].record()
        host.append(1e6 * (time.perf_counter() - t))
    ends[-1].synchronize()
    times = [1e3 * s.elapsed_time(e) for s, e in zip(starts[iters // 10:], ends[iters // 10:])]  # first 10%: warm-up
    return statistics.median(times), statistics.median(host[iters // 10:])


def measure(torch, protocol, fn, ctx, iters=200):
    """Median us of fn under `protocol` (module docstring)."""
    if protocol == "do_bench":
        import triton.testing
        return 1e3 * triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
    if protocol.startswith("ahead_"):
        us, ctx["host_iter_us"][protocol] = ahead_loop(torch, fn, ctx["big"].zero_, int(protocol.split("_")[1]))
        return us
    zero = protocol.startswith("loop") and "memset" not in protocol or protocol.endswith("_zero")

    def flush():
        if zero:
            ctx["big"].zero_()
        else:
            err = ctx["rt"].cudaMemsetAsync(ctypes.c_void_p(ctx["l2buf"].data_ptr()), 0, ctypes.c_size_t(ctx["l2"]),
                                            ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
            if err:
                raise RuntimeError(f"cudaMemsetAsync failed: error {err}")

    if protocol.startswith("loop"):
        batch = 1 if protocol.endswith("_sync") else iters
        hold = ctx["hold_cycles"] if protocol == "loop_hold" else 0
    else:
        batch, hold = int(protocol.split("_b")[1].split("_")[0]), ctx["hold_cycles"]
    reset = persisting_reset(ctx["rt"]) if protocol.startswith("harness_reset") else None
    times = []
    for b in range(-1, max(1, iters // batch)):  # one batch of warm-up
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(batch)]
        for k, (start, end) in enumerate(pairs):
            if reset is not None:
                reset(pairs, k)
            flush()
            if hold:
                torch.cuda._sleep(hold)
            start.record()
            fn()
            end.record()
        pairs[-1][1].synchronize()
        if b >= 0:
            times += [1e3 * s.elapsed_time(e) for s, e in pairs]
    return statistics.median(times)


def cupti_kernel_us(torch, protocol, fn, ctx):
    """(median us of the call's kernels by CUPTI, the events' median us) for one run of `protocol` under
    torch.profiler. The call's kernels are the names one call of fn launches (profiled alone first); per
    call, their durations are summed. (None, events) when the profiler shows no such kernel."""
    from torch.profiler import ProfilerActivity, profile

    def kernels(prof):
        return [e for e in prof.events() if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA
                and e.time_range.end > e.time_range.start]
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = {e.name for e in kernels(prof)}
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        events_us = measure(torch, protocol, fn, ctx)
        torch.cuda.synchronize()
    mine = sorted((e for e in kernels(prof) if e.name in names), key=lambda e: e.time_range.start)
    per_call = max(1, len(names))
    sums = [sum(e.time_range.end - e.time_range.start for e in mine[i:i + per_call])
            for i in range(0, len(mine) - per_call + 1, per_call)]
    return (statistics.median(sums) if sums else None), events_us


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out")
    ap.add_argument("--shapes", default="256x4096,2048x2048,8192x768")
    ap.add_argument("--protocols", default=",".join(PROTOCOLS))
    ap.add_argument("--calls", default=",".join(CALLS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cupti", action="store_true", help="also each protocol's kernel durations by CUPTI (torch.profiler)")
    ap.add_argument("--hold-us", type=float, default=None,
                    help="the hold of the harness_* and loop_hold protocols in us (default: twice the call's host time)")
    ap.add_argument("--lib", help="libsolbench_probe.so for the vectorized call (default: the newest under build/)")
    a = ap.parse_args()
    try:
        shapes = parse_shapes(a.shapes)
        protocols = parse_list(a.protocols, PROTOCOLS, "--protocols")
        calls = parse_list(a.calls, CALLS, "--calls")
        if a.hold_us is not None and not 0 <= a.hold_us <= 1000:
            raise ValueError(f"--hold-us must be from 0 to 1000, got {a.hold_us:g}")
    except ValueError as e:
        print(f"timing_probe: {e}", file=sys.stderr)
        return 2
    lib_path = a.lib or find_probe_lib(str(pathlib.Path(__file__).resolve().parent.parent))
    if "vectorized" in calls and not (lib_path and os.path.isfile(lib_path)):
        print(f"timing_probe: the vectorized call needs libsolbench_probe.so: {lib_path or 'none under build/'}"
              " (build the suite, or give --lib)", file=sys.stderr)
        return 2
    import torch
    from crosscheck_torch import host_us, sm_clock_mhz
    lib = probe_lib(lib_path) if "vectorized" in calls else None
    torch._dynamo.config.cache_size_limit = 64
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    ctx = {"rt": cudart(), "l2": l2, "l2buf": torch.empty(l2 // 4, dtype=torch.int32, device="cuda"),
           "big": torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")}
    ctx["rt"].cudaMemsetAsync.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
    stream = torch.cuda.Stream()
    rows = []
    for r, h in shapes:
        for call in calls:
            with torch.cuda.stream(stream):
                fn = make_call(torch, call, r, h, lib)
                for _ in range(3):
                    fn()
                torch.cuda.synchronize()
                mhz = sm_clock_mhz(torch)
                host = host_us(torch, fn, calls=21)
                hold_us = min(2 * host, 1000.0) if a.hold_us is None else a.hold_us
                ctx["hold_cycles"] = int(hold_us * mhz)
                res, clock = {}, {}
                ctx["host_iter_us"] = {}
                for _ in range(a.rounds):
                    for p in protocols:
                        res.setdefault(p, []).append(measure(torch, p, fn, ctx))
                        clock.setdefault(p, []).append(sm_clock_mhz(torch))
                cupti = {p: cupti_kernel_us(torch, p, fn, ctx) for p in protocols} if a.cupti else {}
            row = {"shape": f"{r}x{h}", "call": call, "host_us": host, "hold_us": hold_us,
                   # --cupti: per protocol, [kernel us by CUPTI, the events' us of the same profiled run]
                   "cupti_kernel_and_events_us": cupti,
                   "us": {p: statistics.median(v) for p, v in res.items()},
                   "spread_us": {p: [min(v), max(v)] for p, v in res.items()},
                   "sm_mhz": {p: statistics.median(v) for p, v in clock.items()},
                   "host_iter_us": dict(ctx["host_iter_us"])}  # ahead_N: the last round's host time an iteration
            rows.append(row)
            print(f"{r}x{h} {call:8s} host {host:.1f} us hold {hold_us:.1f} us  " +
                  "  ".join(f"{p} {row['us'][p]:.2f}@{row['sm_mhz'][p]:.0f}" for p in protocols), flush=True)
            for p, (k, ev) in cupti.items():
                print(f"    {p}: kernel {k if k is None else round(k, 2)} us by CUPTI, events {ev:.2f} us (profiled run)", flush=True)
            del fn
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "l2_bytes": l2,
                       "probe_lib": lib_path if lib is not None else None,
                       "rounds": a.rounds, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
