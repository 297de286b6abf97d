#!/usr/bin/env python3
"""Outside check of the harness: time the PyTorch ops the suite uses as baselines with triton's
do_bench (its own events, its own 256 MB L2 flush, median) on the same GPU, in the same command as a
bench run, and compare with the harness's cold figures for the same cases.

    python3 scripts/crosscheck_torch.py RUN.json... [-o crosscheck.json] [--tolerance 0.05] [--attention-tolerance 0.05]
                                        [--filter REGEX] [--anchors results/<gpu>/anchors.json]

Cases (cold, every shape and dtype in the run): torch_rms_norm (= torch.rms_norm = at::rms_norm),
and for attention the same ATen op each torch_sdpa_<backend> case calls in ref/torch/torch_attention.cpp
(flash, efficient with K/V expanded to heads_q, cudnn, math with enable_gqa) on BHSD views of BSHD
tensors, plus torch_manual_composite; attention shapes that need an explicit bottom-right mask
(causal with 1 < q_len != kv_len) are left out. And every row of bench/bench_torch.py (torch.compile,
Triton, FlexAttention, the solbench operators; rmsnorm, fused_add_rmsnorm, rmsnorm_backward, attention),
built by bench/pybench as bench_torch builds it and compiled by one call before do_bench; a row
bench_torch would skip here (an operator not built, PyTorch refusing) is skipped with its reason.
do_bench is timed two ways and the compared figure is plain where the call's host time is shorter than
its GPU time, else the lower of the two medians (the row's `compared` says which; compared_figure()):
- plain, as it comes (the issue's check: its own events, its own 256 MB flush);
- held: with the harness's hold added after its flush (a GPU spin of twice the call's host time, at
  most 1 ms, before do_bench's start event; see held_flush).
Each errs only upward, in a way the other does not: plain do_bench times the host whenever a call's host
side outlasts its flush (on the H200, cuDNN and flash decode at b1 KV 4096: 52-57 us plain against a
GPU span of 14-21 us by the profiler, 17-25 us held); held do_bench reads 0.5-0.7 us above plain
and the harness at the ~10 us RMSNorm cases (t256_h4096: 11.17 held, 10.53 plain, 10.42 harness,
8.10 us kernel span by the profiler).
For cases under 100 us, and for cases up to 10 ms whose SM clock after plain do_bench is more than 4%
below the harness's sm_mhz (wants_diagnostics), three diagnostics: the held do_bench once more with a
flush of the L2's size instead of 256 MB (do_bench_l2_flush_us), the call timed with the harness's own
protocol from Python (harness_protocol_py_us: batches of 4 cold launches, one synchronization a batch), and
do_bench's own loop with a synchronization after every iteration (do_bench_loop_sync_us: the one change
that moves do_bench's ~10 us figures onto the harness's); the SM clock is recorded after each variant.
do_bench runs --runs times per case under 1 ms, once past it (median of its medians, with their min and max recorded): at
~10 us a single do_bench call moves by up to 8% from run to run on the H200, more than the tolerance.
Each row also records the SM clock right after the case's do_bench calls (torch.cuda._sleep timed by
events) beside the harness's sm_mhz counter, and, from torch.profiler (--no-kernels skips it), the
GPU kernels one Python call launches and their GPU span after do_bench's flush by CUPTI's timestamps,
no events involved: a clock that differs between the tools, an extra kernel in the Python call, or
a kernel that itself runs longer under do_bench accounts for a difference that is not the harness's
events.
Exit 1 when any case differs by more than the tolerance, 2 on bad input, 0 otherwise.
"""
import argparse
import contextlib
import ctypes
import glob
import json
import os
import pathlib
import re
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import sbresults  # noqa: E402

DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
L2_FLUSH_DIAGNOSTIC_US = 100.0  # cases under this (harness figure) also get the L2-sized-flush diagnostic
CLOCK_GAP_DIAGNOSTIC = 0.04     # ... and cases up to CLOCK_GAP_MAX_US whose clock after do_bench is this far
CLOCK_GAP_MAX_US = 10_000.0     # below the harness's (relative)


def wants_diagnostics(harness_us, harness_mhz, do_bench_mhz):
    """Whether a case gets the diagnostics (the L2-sized flush, the harness's protocol from Python, the
    synchronized loop). Launches under L2_FLUSH_DIAGNOSTIC_US, where the flush and the launch path weigh
    most; and launches up to CLOCK_GAP_MAX_US whose SM clock after plain do_bench is more than
    CLOCK_GAP_DIAGNOSTIC below the harness's sm_mhz: on the H200, SDPA flash decode b64 KV 16384 read
    6% slower under do_bench at a 6% lower clock in two runs, and the L2-sized
    flush says whether do_bench's 256 MB memset before every call is what lowers it."""
    if harness_us < L2_FLUSH_DIAGNOSTIC_US:
        return True
    if harness_us > CLOCK_GAP_MAX_US or not harness_mhz or not do_bench_mhz:
        return False
    return do_bench_mhz < (1.0 - CLOCK_GAP_DIAGNOSTIC) * harness_mhz


def rms_norm_call(torch, case, dtype):
    r, h = case.shape["rows"], case.shape["hidden"]
    x = torch.randn(r, h, device="cuda", dtype=dtype)
    w = torch.randn(h, device="cuda", dtype=dtype) * 0.5 + 1
    return lambda: torch.rms_norm(x, (h,), w, 1e-6)


def attention_call(torch, case, dtype, bshd=None):
    """The ATen call of ref/torch/torch_attention.cpp for this case, or None when it needs a mask. bshd:
    (q, k, v) as BSHD tensors to call it on (default: new random ones)."""
    s = case.shape
    b, hq, hkv, d, sq, sk = (s["batch"], s["heads_q"], s["heads_kv"], s["head_dim"], s["q_len"], s["kv_len"])
    causal = bool(s.get("causal"))
    if causal and sq != sk and sq != 1:
        return None
    is_causal = causal and sq == sk
    scale = d ** -0.5
    bhsd = lambda seq, heads: torch.randn(b, seq, heads, d, device="cuda", dtype=dtype).permute(0, 2, 1, 3)
    if bshd is None:
        q, k, v = bhsd(sq, hq), bhsd(sk, hkv), bhsd(sk, hkv)
    else:
        q, k, v = (t.permute(0, 2, 1, 3) for t in bshd)
    aten, g = torch.ops.aten, hq // hkv

    def repeat_kv(t):
        return t if g == 1 else t.unsqueeze(2).expand(b, hkv, g, sk, d).reshape(b, hq, sk, d)

    def composite():
        scores = torch.matmul(q, repeat_kv(k).transpose(-2, -1)) * scale
        if causal and sq > 1:
            keep = torch.ones(sq, sk, device="cuda", dtype=torch.bool).tril(sk - sq)
            scores.masked_fill_(keep.logical_not(), float("-inf"))
        return torch.matmul(torch.softmax(scores, -1, dtype=torch.float32).to(dtype), repeat_kv(v))

    return {
        "torch_sdpa_flash": lambda: aten._scaled_dot_product_flash_attention(q, k, v, 0.0, is_causal, False, scale=scale),
        "torch_sdpa_efficient": lambda: aten._scaled_dot_product_efficient_attention(
            q, repeat_kv(k), repeat_kv(v), None, False, 0.0, is_causal, scale=scale),
        "torch_sdpa_cudnn": lambda: aten._scaled_dot_product_cudnn_attention(
            q, k, v, None, False, 0.0, is_causal, False, scale=scale),
        "torch_sdpa_math": lambda: aten._scaled_dot_product_attention_math(
            q, k, v, None, 0.0, is_causal, None, scale=scale, enable_gqa=True),
        "torch_manual_composite": composite,
    }[case.impl]


OPS = {"torch_rms_norm": rms_norm_call, **{name: attention_call for name in (
    "torch_sdpa_flash", "torch_sdpa_efficient", "torch_sdpa_cudnn", "torch_sdpa_math", "torch_manual_composite")}}
# The ops whose PyTorch baselines this script can call alone (bench_e2e's layers are not one op).
CHECKED_OPS = ("rmsnorm", "attention")
BENCH = pathlib.Path(__file__).resolve().parents[1] / "bench"


def python_rows() -> dict:
    """op -> bench_torch's implementations of it (bench/pybench: torch.compile, Triton, FlexAttention, the solbench
    operators), read without importing torch or the harness's library; {} where the package is not there."""
    sys.path.insert(0, str(BENCH))
    try:
        from pybench.impls import IMPLEMENTATIONS
        return IMPLEMENTATIONS
    except ImportError:
        return {}
    finally:
        sys.path.remove(str(BENCH))


def checkable(case, rows: dict) -> bool:
    """A case this script can call: a PyTorch baseline of OPS, or a bench_torch row. Not a case at a paged shape:
    its batch's lengths come from the harness's C++ generator (bench/paged_lengths.h), which this script does not
    load."""
    if "page_size" in case.shape:
        return False
    return (case.op in CHECKED_OPS and case.impl in OPS) or case.impl in rows.get(case.op, ())


def python_row_call(torch, case, dtype):
    """A bench_torch row's timed call, built as bench_torch builds it (its inputs, its compiled function, compiled
    by one first call here), on the current stream; None, with the reason on stderr, where the row cannot run
    (an operator not built, PyTorch refusing: bench_torch skips it too)."""
    sys.path.insert(0, str(BENCH))
    try:
        from pybench import cases as pycases
        from pybench.rows import Unsupported
    finally:
        sys.path.remove(str(BENCH))
    module, impls = pycases.OPS[case.op]
    base = case.name.rsplit("/", 1)[0]
    try:
        inputs = module.inputs(case.op, case.shape, dtype, f"{case.op}/{case.dtype}/{case.shape_label}")
        built = impls[case.impl](inputs, {}, base.replace("/", "_"))
        if built.restore:
            built.restore()
        built.launch()
    except Exception as e:  # noqa: BLE001 - as bench_torch: a refusal skips the row
        if not (isinstance(e, Unsupported) or pycases.is_refusal(e)):
            raise
        print(f"crosscheck_torch: {case.name}: skipped, {pycases.describe(e)}", file=sys.stderr)
        return None
    return built.launch


def call_for(torch, case, dtype, rows: dict):
    if case.impl in rows.get(case.op, ()):
        return python_row_call(torch, case, dtype)
    return OPS[case.impl](torch, case, dtype)


def profiled_calls(torch, fn, reps=20):
    """What the profiler sees of fn under do_bench's conditions: `reps` times a 256 MB zero_ (the
    L2 flush do_bench uses) then one call, on the current stream, under torch.profiler (CUPTI's
    kernel timestamps, no events). Returns (names of the kernels one call launches, the median over
    calls of the GPU span of those kernels in us: first start to last end), or (None, None) when the
    profiler cannot see CUDA activity here.

    The span says whether the op itself runs longer under do_bench than the harness's events say (the
    span is then near do_bench's figure), or whether the time is outside the kernels (the span is then
    near the harness's figure); an extra kernel in the Python call shows in the names."""
    try:
        from torch.profiler import ProfilerActivity, profile
        cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int, device="cuda")
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(reps):
                cache.zero_()
                fn()
            torch.cuda.synchronize()
        ks = sorted((e for e in prof.events() if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA
                     and e.time_range.end > e.time_range.start), key=lambda e: e.time_range.start)
        # One stream runs in order, so the kernels come as reps periods of [flush, the call's kernels].
        if not ks or len(ks) % reps:
            return None, None
        period = len(ks) // reps
        chunks = [ks[i:i + period] for i in range(0, len(ks), period)]
        if period < 2 or any(c[0].name != ks[0].name for c in chunks):
            return None, None
        spans = [c[-1].time_range.end - c[1].time_range.start for c in chunks]
        return [e.name for e in chunks[0][1:]], statistics.median(spans)
    except Exception:  # noqa: BLE001 - a diagnostic: never fail the cross-check over it
        return None, None


def cudart():
    """The CUDA runtime PyTorch loaded (cudaMemsetAsync is not exposed by torch)."""
    import torch
    roots = [os.path.dirname(torch.__file__)] + [os.path.join(p, "nvidia") for p in sys.path if os.path.isdir(os.path.join(p, "nvidia"))]
    for root in roots:
        for path in sorted(glob.glob(os.path.join(root, "**", "libcudart.so*"), recursive=True)):
            try:
                return ctypes.CDLL(path)
            except OSError:
                continue
    return ctypes.CDLL("libcudart.so")


def persisting_reset(rt):
    """The harness's step before each cold launch (bench/harness/timer.h), through the
    CUDA runtime `rt`: reset(pairs, k) waits for launch k - 1 of the batch (its end event; launch 0
    follows the batch synchronization), then resets the L2's persisting lines; RuntimeError with the CUDA
    error number if the reset fails."""
    def reset(pairs, k):
        if k:
            pairs[k - 1][1].synchronize()
        err = rt.cudaCtxResetPersistingL2Cache()
        if err:
            raise RuntimeError(f"cudaCtxResetPersistingL2Cache failed: error {err}")
    return reset


def timed_loop_us(torch, fn, flush_bytes, hold_cycles=0, batches=25, batch=4, warmup_batches=1, reset=None):
    """fn timed in batches of `batch` cold launches: each a flush (zero_ of flush_bytes), the hold (a spin
    of hold_cycles; none at 0), start event, the call, end event; one host synchronization a batch.
    With `reset` (persisting_reset()), reset(pairs, k) runs before launch k's flush. Returns the median
    in us over batches * batch launches, after warmup_batches batches of warm-up."""
    cache = torch.empty(flush_bytes // 4, dtype=torch.int, device="cuda")
    times = []
    for b in range(warmup_batches + batches):
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(batch)]
        for k, (start, end) in enumerate(pairs):
            if reset is not None:
                reset(pairs, k)
            cache.zero_()
            if hold_cycles:
                torch.cuda._sleep(hold_cycles)
            start.record()
            fn()
            end.record()
        pairs[-1][1].synchronize()
        if b >= warmup_batches:
            times += [1e3 * start.elapsed_time(end) for start, end in pairs]
    return statistics.median(times)


def harness_protocol_us(torch, fn, flush_bytes, hold_cycles, batches=25, batch=4, reset=None):
    """fn timed the harness's way, from Python: batches of `batch` cold launches, each an L2-sized flush,
    the hold, start event, the call, end event; one host synchronization a batch (bench/harness/timer.h);
    after one batch of warm-up. With `reset` (persisting_reset()), each launch waits for the one before
    it and resets the L2's persisting lines before its flush, as the harness does. A diagnostic beside do_bench: where it agrees with the harness and not with do_bench,
    the difference is do_bench's protocol (its back-to-back loop of 256 MB flushes), not the C++ process
    or its events."""
    return timed_loop_us(torch, fn, flush_bytes, hold_cycles, batches, batch, reset=reset)


def loop_sync_us(torch, fn, iters=200):
    """do_bench's loop (a 256 MB zero_, start event, the call, end event) with a host synchronization
    after every iteration, median in us over `iters` after 10 of warm-up. A diagnostic: this one change
    moves do_bench's ~10 us figures onto the harness's; recorded in every run so that the finding is
    re-measured."""
    return timed_loop_us(torch, fn, 256 * 1024 * 1024, batches=iters, batch=1, warmup_batches=10)


def sm_clock_mhz(torch, cycles=1_000_000):
    """The SM clock now, in MHz: torch.cuda._sleep spins `cycles` SM cycles, timed by CUDA events
    (~0.5 ms at H200 clocks, so the events' own microseconds bias it by < 1%). Taken right after a
    case's do_bench calls, beside the harness's sm_mhz counter for the same case."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)  # the first call loads the kernel: on the H200 it read 98 MHz without this
    start.record()
    torch.cuda._sleep(cycles)
    end.record()
    end.synchronize()
    return cycles / (start.elapsed_time(end) * 1e3)


def host_us(torch, fn, calls=5):
    """The host's time for one call of fn (the launch side: Python, dispatch, library set-up), the
    median of `calls` calls timed without waiting for the GPU."""
    torch.cuda.synchronize()
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    torch.cuda.synchronize()
    return 1e6 * statistics.median(times)


@contextlib.contextmanager
def held_flush(torch, cycles, flush_bytes=None):
    """do_bench with the harness's hold: after do_bench's own L2 flush, a GPU spin of `cycles` SM cycles
    (torch.cuda._sleep) before its start event. When a call's host side outlasts the flush, plain do_bench
    starts its events while the GPU waits for the host and so times the host; with the spin queued
    first, the call is on the GPU's queue before the start event runs. Patches the flush of triton's
    active driver (triton 3.x: driver.active.clear_cache) for the duration; raises RuntimeError where
    that does not exist. flush_bytes (a diagnostic) zeroes only the first flush_bytes of do_bench's
    256 MB buffer instead of all of it, e.g. the L2's size as the harness's flush."""
    import triton
    drv = triton.runtime.driver.active
    flush = getattr(drv, "clear_cache", None)
    if flush is None:
        raise RuntimeError(f"triton {triton.__version__}: no driver.active.clear_cache to add the hold to")

    def flush_then_hold(cache):
        if flush_bytes is None:
            flush(cache)
        else:
            cache[: flush_bytes // cache.element_size()].zero_()
        torch.cuda._sleep(cycles)

    drv.clear_cache = flush_then_hold
    try:
        yield
    finally:
        del drv.clear_cache


def compared_figure(plain_us, held_us, host_us=None, gpu_us=None):
    """The do_bench figure the harness is compared with, and which one it is: plain where the call's host
    time (host_us) is shorter than its GPU time (gpu_us, the harness's figure): do_bench's queue then runs
    ahead of the GPU and its events cannot time the host, while held's spin would only lower the duty
    cycle, which raises the SM clock of a power-limited launch (SDPA cuDNN prefill b4 4k causal on the
    H200: plain 1,034 us, held 938, harness 1,001). Otherwise the lower of the plain and held medians
    (each errs only upward there: plain by timing the host, held by its hold; module docstring). Without
    a held figure (a triton without clear_cache), plain."""
    if held_us is None or plain_us <= held_us:
        return plain_us, "plain"
    if host_us is not None and gpu_us is not None and host_us < gpu_us:
        return plain_us, "plain"
    return held_us, "held"


def anchor_filter(path):
    """A predicate on cases: true for every non-attention case, and for an attention case whose dtype and
    shape label one of the file's attention entries has. Without a file, always true."""
    if not path:
        return lambda case: True
    entries = json.loads(sbresults.read_text(path))["anchors"]
    keys = {(e["dtype"], e["shape"]) for e in entries if e["op"] == "attention"}
    if not keys:
        raise ValueError("no attention entries")
    return lambda case: case.op != "attention" or (case.dtype, case.shape_label) in keys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", nargs="+", help="bench JSON of the same machine (files or directory)")
    ap.add_argument("-o", "--out", help="write the comparison as JSON here")
    ap.add_argument("--tolerance", type=float, default=0.05, help="relative difference allowed for RMSNorm (default 0.05)")
    # 5% for attention too: the figure the suite's acceptance asks of the cross-check.
    ap.add_argument("--attention-tolerance", type=float, default=0.05,
                    help="relative difference allowed for attention (default 0.05, as for RMSNorm)")
    ap.add_argument("--runs", type=int, default=5, help="do_bench calls per case (default 5)")
    ap.add_argument("--filter", default="", help="only cases whose name matches this regular expression")
    ap.add_argument("--no-kernels", dest="kernels", action="store_false",
                    help="do not profile the PyTorch calls (torch.profiler: the kernels a call launches and "
                         "their GPU time after do_bench's flush)")
    ap.add_argument("--anchors", metavar="ANCHORS_JSON",
                    help="attention cases only at the dtype and shape of an attention entry of this file "
                         "(results/<gpu>/anchors.json); other ops are not narrowed")
    a = ap.parse_args()
    try:
        run = sbresults.load(a.run)
    except sbresults.ResultsError as e:
        print(f"crosscheck_torch: {e}", file=sys.stderr)
        return 2
    try:
        keep = re.compile(a.filter)
    except re.error as e:
        print(f"crosscheck_torch: --filter: not a regular expression: {e}", file=sys.stderr)
        return 2
    try:
        at_anchor = anchor_filter(a.anchors)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"crosscheck_torch: --anchors {a.anchors}: {e}", file=sys.stderr)
        return 2
    rows_of = python_rows()
    cases = [c for c in run.cases
             if checkable(c, rows_of) and c.mode == "cold" and c.ok and keep.search(c.name) and at_anchor(c)]
    if not cases:
        print("crosscheck_torch: the run has no cold PyTorch baseline cases (built without libtorch?)", file=sys.stderr)
        return 2
    try:
        import torch
        import triton.testing
    except ImportError as e:
        print(f"crosscheck_torch: needs PyTorch and triton on a GPU machine: {e}", file=sys.stderr)
        return 2

    rows, worst = [], 0.0
    stream = torch.cuda.Stream()
    l2_bytes = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    can_hold = hasattr(triton.runtime.driver.active, "clear_cache")
    # The harness's protocol from Python: each cold launch resets the L2's persisting lines, as the harness's.
    reset = persisting_reset(cudart())
    if not can_hold:
        print(f"crosscheck_torch: triton {triton.__version__} has no driver.active.clear_cache to add the "
              "hold to: comparing with plain do_bench", file=sys.stderr)
    for case in cases:
        with torch.cuda.stream(stream):  # a non-default stream, as the harness uses
            fn = call_for(torch, case, getattr(torch, DTYPES[case.dtype]), rows_of)
            if fn is None:
                continue
            # Past 1 ms a do_bench call is steady to ~1% (crosscheck_runs/): one call is enough.
            runs = 1 if case.median_us > 1000 else max(1, a.runs)
            bench = lambda: 1e3 * triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")  # noqa: E731
            plain_us = sorted(bench() for _ in range(runs))
            plain_mhz = mhz = sm_clock_mhz(torch)
            # The hold, as the harness's: twice the call's host time (at most 1 ms), in cycles at this clock.
            host_call_us = host_us(torch, fn)
            hold_us = min(2 * host_call_us, 1000.0)
            l2_us = l2_mhz = proto_us = proto_mhz = sync_us = sync_mhz = None
            if can_hold:
                with held_flush(torch, int(hold_us * plain_mhz)):
                    runs_us = sorted(bench() for _ in range(runs))
                mhz = sm_clock_mhz(torch)
                # Diagnostics (wants_diagnostics): the same with a flush of the L2's size, as the
                # harness's, instead of do_bench's 256 MB every call; the harness's protocol; the
                # synchronized loop.
                if wants_diagnostics(case.median_us, case.counters.get("sm_mhz"), plain_mhz):
                    with held_flush(torch, int(hold_us * plain_mhz), flush_bytes=l2_bytes):
                        l2_us = statistics.median(bench() for _ in range(runs))
                    l2_mhz = sm_clock_mhz(torch)
                    proto_us = harness_protocol_us(torch, fn, l2_bytes, int(hold_us * plain_mhz), reset=reset)
                    proto_mhz = sm_clock_mhz(torch)
                    sync_us = loop_sync_us(torch, fn)
                    sync_mhz = sm_clock_mhz(torch)
            else:  # an older triton: compare with plain do_bench (said once, above)
                runs_us, hold_us = plain_us, None
            kernels, kernel_span_us = profiled_calls(torch, fn) if a.kernels else (None, None)
        plain_med = statistics.median(plain_us)
        held_med = statistics.median(runs_us) if can_hold else None
        do_bench_us, compared = compared_figure(plain_med, held_med, host_call_us, case.median_us)
        spread_us = plain_us if compared == "plain" else runs_us
        ratio = case.median_us / do_bench_us
        tol = a.attention_tolerance if case.op == "attention" else a.tolerance
        worst = max(worst, abs(ratio - 1))
        rows.append({"case": case.name, "harness_us": case.median_us, "do_bench_us": do_bench_us,
                     "do_bench_min_us": spread_us[0], "do_bench_max_us": spread_us[-1], "ratio": ratio,
                     # which do_bench figure is compared (compared_figure); both, and the held one's hold
                     "compared": compared, "do_bench_plain_us": plain_med, "do_bench_held_us": held_med,
                     "hold_us": hold_us, "host_us": host_call_us,
                     "do_bench_plain_sm_mhz": plain_mhz,
                     # the held do_bench again with an L2-sized flush, and the clock after it (diagnostic)
                     "do_bench_l2_flush_us": l2_us, "do_bench_l2_flush_sm_mhz": l2_mhz,
                     # the harness's protocol from Python (harness_protocol_us), and the clock after it
                     "harness_protocol_py_us": proto_us, "harness_protocol_py_sm_mhz": proto_mhz,
                     # do_bench's loop with a sync after every iteration (loop_sync_us), and the clock after it
                     "do_bench_loop_sync_us": sync_us, "do_bench_loop_sync_sm_mhz": sync_mhz,
                     "ok": abs(ratio - 1) <= tol,
                     # the SM clock after do_bench and after the harness's launches (its sm_mhz counter)
                     "do_bench_sm_mhz": mhz, "harness_sm_mhz": case.counters.get("sm_mhz"),
                     # the SM clock during the harness's timed loop (its hold_mhz counter; newer runs)
                     "harness_hold_mhz": case.counters.get("hold_mhz"),
                     "kernels": kernels, "profiled_kernel_us": kernel_span_us})
        hmhz = case.counters.get("sm_mhz")
        print(f"{case.name:55s} harness {case.median_us:9.2f} us  do_bench {do_bench_us:9.2f} us "
              f"[{compared}] (plain {plain_med:.2f}" + (f", held {held_med:.2f}" if held_med is not None else "")
              + (f", L2-sized flush {l2_us:.2f} at {l2_mhz:.0f} MHz" if l2_us else "")
              + (f", harness protocol from Python {proto_us:.2f} at {proto_mhz:.0f} MHz" if proto_us else "")
              + (f", do_bench's loop synchronized {sync_us:.2f}" if sync_us else "") + ")  "
              f"ratio {ratio:6.3f}  {'ok' if rows[-1]['ok'] else 'DIFFERS'}  "
              f"SM MHz {f'{hmhz:.0f}' if hmhz else '-'} / {mhz:.0f}"
              + (f"  kernels {len(kernels)} ({kernel_span_us:.2f} us under the profiler)" if kernels else ""))
        del fn
    bad = [r for r in rows if not r["ok"]]
    summary = {"tolerance": a.tolerance, "attention_tolerance": a.attention_tolerance, "cases": len(rows), "failed": len(bad), "worst_rel_diff": worst,
               "torch_version": torch.__version__, "triton_version": triton.__version__,
               "gpu_name": torch.cuda.get_device_name(), "run_context_gpu": run.context.get("gpu_name"),
               "rows": rows}
    if a.out:
        pathlib.Path(a.out).write_text(json.dumps(summary, indent=1) + "\n")
    print(f"{len(rows) - len(bad)} passed, {len(bad)} failed (harness vs do_bench within {a.tolerance:.0%}, "
          f"attention {a.attention_tolerance:.0%}; "
          f"worst {worst:.1%})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
