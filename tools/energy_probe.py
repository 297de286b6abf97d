#!/usr/bin/env python3
"""Investigation tool: the energy one attention call costs, ours against PyTorch's, at the same shape in
one process.

Why: under the power limiter, a kernel that spends more energy a cycle runs at a lower SM clock, so two
kernels level in SM cycles can differ in time. Whether ours draws more power per cycle than PyTorch's is
what this measures.

For each shape, each call is launched back to back for --seconds (the queue kept two chunks deep, so the
GPU does not idle), in --rounds rounds, the order of the calls reversed every other round. A round reads
NVML's energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ since the driver loaded) before and after,
and samples the SM clock, the power draw and the clock-event reasons after each chunk. A row:
    joules_per_call   the counter's difference over the round, over the calls
    gpu_us_per_call   CUDA events around the round, over the calls
    mean_power_w      the counter's difference over the round's wall time
    sm_mhz            the median of the clock samples; cycles_per_call = gpu_us_per_call x sm_mhz
    reasons           the clock-event reasons seen in any sample (NVML's bit names)
The summary gives each call's medians over the rounds and the first call's ratios against each other's.

Calls: the suite's attention variants (wgmma_flash, tiled_flash, decode_splitk, ...) through
bench/probe_capi.cpp's library by ctypes, and PyTorch's SDPA backends (torch_sdpa_cudnn,
torch_sdpa_flash) as ATen calls, the ones crosscheck_torch.py times and ref/torch/torch_attention.cpp
benchmarks, on the same BSHD bf16 tensors. Before a shape is timed, each of our calls' output is compared
with the first PyTorch call's: the difference must be under 1/64 (a guard on the ctypes path and the
layouts, whose mistakes give differences of order 1; the kernels' own tests hold them to an fp64
reference). Shapes are bench_attention's labels; masks other than causal with q_len = kv_len are left
to the suite.

    python3 tools/energy_probe.py [-o energy.json] [--shapes b4_hq32_hkv32_d128_q4096_kv4096_causal,...]
                                    [--calls wgmma_flash,torch_sdpa_cudnn] [--rounds 4] [--seconds 1.5]
                                    [--lib build/release/bench/libsolbench_probe.so]

Exit status: 0, 2 for a usage error or a failed output check, 3 without an NVIDIA GPU.
"""
import argparse
import ctypes
import glob
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time
import types

# tools/ builds on the suite's scripts (results loader, build info, the cross-check's PyTorch calls).
sys.path[:0] = [str(pathlib.Path(__file__).resolve().parent), str(pathlib.Path(__file__).resolve().parents[1] / "scripts")]
from sbresults import ResultsError, parse_shape  # noqa: E402

TORCH_CALLS = ("torch_sdpa_cudnn", "torch_sdpa_flash")
DEFAULT_SHAPES = "b4_hq32_hkv32_d128_q4096_kv4096_causal,b8_hq16_hkv16_d128_q2048_kv2048"
SHAPE_KEYS = ("batch", "heads_q", "heads_kv", "head_dim", "q_len", "kv_len")
GUARD = 1 / 64  # see the module docstring


def find_probe_lib(root):
    """The newest libsolbench_probe.so under root/build, or None."""
    found = glob.glob(os.path.join(root, "build", "**", "libsolbench_probe.so"), recursive=True)
    return max(found, key=os.path.getmtime) if found else None


def parse_shapes(text):
    """bench_attention shape labels, each with the six sizes; causal only with q_len = kv_len."""
    shapes = []
    for label in (t.strip() for t in text.split(",")):
        if not label:
            continue
        try:
            s = parse_shape(label)
        except ResultsError as e:
            raise ValueError(f"--shapes: {e}") from None
        missing = [k for k in SHAPE_KEYS if k not in s]
        if missing or set(s) - set(SHAPE_KEYS) - {"causal"}:
            raise ValueError(f"--shapes: {label!r} is not an attention shape (b.._hq.._hkv.._d.._q.._kv..[_causal])")
        if s.get("causal") and s["q_len"] != s["kv_len"]:
            raise ValueError(f"--shapes: {label!r}: causal needs q_len = kv_len here")
        s.setdefault("causal", False)
        shapes.append((label, s))
    if not shapes:
        raise ValueError("--shapes: empty list")
    return shapes


def parse_calls(text):
    """Variant names and torch_sdpa_* backends; at least one of each, so that there is a check and a ratio."""
    calls = [t.strip() for t in text.split(",") if t.strip()]
    bad = [c for c in calls if c.startswith("torch_") and c not in TORCH_CALLS]
    if bad:
        raise ValueError(f"--calls: unknown {', '.join(bad)}; PyTorch calls are {', '.join(TORCH_CALLS)}")
    if len(set(calls)) != len(calls):
        raise ValueError("--calls: a call is named twice")
    if not any(c in TORCH_CALLS for c in calls) or all(c in TORCH_CALLS for c in calls):
        raise ValueError("--calls: name at least one of ours and one of " + ", ".join(TORCH_CALLS))
    return calls


def summarize(rows, calls):
    """Per shape and call, the medians over rounds; ratios of the first call against each other."""
    out = {}
    for label in dict.fromkeys(r["shape"] for r in rows):
        per = {}
        for c in calls:
            mine = [r for r in rows if r["shape"] == label and r["call"] == c]
            per[c] = {k: statistics.median(r[k] for r in mine)
                      for k in ("joules_per_call", "gpu_us_per_call", "mean_power_w", "sm_mhz", "cycles_per_call")}
        first = per[calls[0]]
        ratios = {c: {k: first[k] / per[c][k] for k in ("joules_per_call", "gpu_us_per_call", "cycles_per_call")}
                  for c in calls[1:]}
        out[label] = {"medians": per, f"{calls[0]}_over": ratios}
    return out


def gpu_present():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    except OSError:
        return False


def probe_lib(path):
    """bench/probe_capi.cpp's attention entry points, their C signatures declared."""
    lib = ctypes.CDLL(path)
    i64, vp = ctypes.c_int64, ctypes.c_void_p
    head = [ctypes.c_char_p, i64, i64, i64, i64, i64, i64, ctypes.c_int, ctypes.c_char_p, vp, vp, vp, vp]
    lib.solbench_attention_workspace.argtypes = head + [ctypes.POINTER(ctypes.c_size_t), ctypes.c_char_p,
                                                        ctypes.c_size_t]
    lib.solbench_attention.argtypes = head + [vp, ctypes.c_size_t, vp, ctypes.c_char_p, ctypes.c_size_t]
    lib.solbench_attention_workspace.restype = lib.solbench_attention.restype = ctypes.c_int
    return lib


def our_call(torch, lib, variant, s, q, k, v, o):
    """A function that enqueues our variant on the current stream (its workspace allocated once)."""
    args = [variant.encode(), *(s[key] for key in SHAPE_KEYS), int(s["causal"]), b"bf16",
            q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr()]
    err = ctypes.create_string_buffer(512)
    need = ctypes.c_size_t(0)
    if lib.solbench_attention_workspace(*args, ctypes.byref(need), err, len(err)):
        raise RuntimeError(err.value.decode())
    ws = torch.empty(max(need.value, 1), dtype=torch.uint8, device="cuda")

    def call():
        if lib.solbench_attention(*args, ws.data_ptr(), need.value, torch.cuda.current_stream().cuda_stream,
                                  err, len(err)):
            raise RuntimeError(err.value.decode())
    return call


def one_round(torch, nvml, h, fn, seconds, est_us):
    chunk = max(1, int(20_000 / max(est_us, 1.0)))  # ~20 ms of GPU work a chunk
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    e0, t0 = nvml.nvmlDeviceGetTotalEnergyConsumption(h), time.perf_counter()
    start.record()
    calls, mhz, reasons, pending = 0, [], 0, None
    while time.perf_counter() - t0 < seconds:
        for _ in range(chunk):
            fn()
        calls += chunk
        ev = torch.cuda.Event()
        ev.record()
        if pending is not None:
            pending.synchronize()  # two chunks in flight at most: the GPU never drains
            mhz.append(nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM))
            reasons |= event_reasons(nvml, h)
        pending = ev
    end.record()
    end.synchronize()
    e1, t1 = nvml.nvmlDeviceGetTotalEnergyConsumption(h), time.perf_counter()
    gpu_us = start.elapsed_time(end) * 1e3 / calls
    sm = statistics.median(mhz) if mhz else float(nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM))
    return {"calls": calls, "gpu_us_per_call": gpu_us, "joules_per_call": (e1 - e0) / 1e3 / calls,
            "mean_power_w": (e1 - e0) / 1e3 / (t1 - t0), "sm_mhz": sm, "cycles_per_call": gpu_us * sm,
            "reasons": reason_names(nvml, reasons)}


def event_reasons(nvml, h):
    """The clock-event reasons now (NVML renamed "throttle" to "event"; nvidia-ml-py has one or both)."""
    f = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or nvml.nvmlDeviceGetCurrentClocksThrottleReasons
    return f(h)


def reason_names(nvml, mask):
    """The one-bit reason constants set in mask, by name (SwPowerCap, HwSlowdown, ...)."""
    names = set()
    for prefix in ("nvmlClocksEventReason", "nvmlClocksThrottleReason"):
        for n in dir(nvml):
            bit = getattr(nvml, n)
            if n.startswith(prefix) and isinstance(bit, int) and bit > 0 and bit & (bit - 1) == 0 and mask & bit:
                names.add(n[len(prefix):])
    return sorted(names)


def nvml_handle(torch, nvml):
    """The NVML handle of torch's current device, matched by UUID."""
    uuid = str(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid)
    for i in range(nvml.nvmlDeviceGetCount()):
        h = nvml.nvmlDeviceGetHandleByIndex(i)
        u = nvml.nvmlDeviceGetUUID(h)
        u = u.decode() if isinstance(u, bytes) else u
        if u.removeprefix("GPU-") == uuid.removeprefix("GPU-"):
            return h, u
    raise RuntimeError(f"no NVML device has torch's UUID {uuid}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", help="write the rows and the summary as JSON here")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--calls", default="wgmma_flash,torch_sdpa_cudnn")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=1.5, help="each round of each call, back to back")
    ap.add_argument("--lib", help="libsolbench_probe.so (default: the newest under build/)")
    a = ap.parse_args()
    try:
        shapes, calls = parse_shapes(a.shapes), parse_calls(a.calls)
        if a.rounds < 1:
            raise ValueError(f"--rounds must be >= 1, got {a.rounds}")
        if not 0.05 <= a.seconds <= 60:
            raise ValueError(f"--seconds must be from 0.05 to 60, got {a.seconds:g}")
    except ValueError as e:
        print(f"energy_probe: {e}", file=sys.stderr)
        return 2
    if not gpu_present():
        print("energy_probe: no NVIDIA GPU here (nvidia-smi -L failed)", file=sys.stderr)
        return 3
    lib_path = a.lib or find_probe_lib(str(pathlib.Path(__file__).resolve().parent.parent))
    if not (lib_path and os.path.isfile(lib_path)):
        print(f"energy_probe: our calls need libsolbench_probe.so: {lib_path or 'none under build/'}"
              " (build the suite, or give --lib)", file=sys.stderr)
        return 2
    import pynvml as nvml
    import torch
    from crosscheck_torch import attention_call
    lib = probe_lib(lib_path)
    nvml.nvmlInit()
    h, uuid = nvml_handle(torch, nvml)
    env = {"gpu": torch.cuda.get_device_name(), "uuid": uuid, "torch": torch.__version__,
           "driver": nvml.nvmlSystemGetDriverVersion(),
           "power_limit_w": nvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1e3, "lib": lib_path}
    print(json.dumps(env), flush=True)
    rows, checks = [], {}
    torch.manual_seed(0)
    for label, s in shapes:
        b, hq, hkv, d, sq, sk = (s[k] for k in SHAPE_KEYS)
        q = torch.randn(b, sq, hq, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, sk, hkv, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, sk, hkv, d, device="cuda", dtype=torch.bfloat16)
        fns, outs = {}, {}
        for c in calls:
            if c in TORCH_CALLS:
                aten_fn = attention_call(torch, types.SimpleNamespace(shape=s, impl=c), torch.bfloat16, (q, k, v))
                fns[c] = aten_fn
                outs[c] = lambda f=aten_fn: f()[0].permute(0, 2, 1, 3)
            else:
                o = torch.empty_like(q)
                fns[c] = our_call(torch, lib, c, s, q, k, v, o)
                outs[c] = lambda f=fns[c], o=o: (f(), o)[1]
        ref_name = next(c for c in calls if c in TORCH_CALLS)
        ref = outs[ref_name]().float()
        for c in calls:
            if c in TORCH_CALLS:
                continue
            diff = (outs[c]().float() - ref).abs().max().item()
            checks[f"{label}/{c}"] = diff
            if not diff < GUARD:
                print(f"energy_probe: {c} at {label} differs from {ref_name} by {diff:g} (guard {GUARD:g})",
                      file=sys.stderr)
                return 2
        est = {}
        for c in calls:  # warm-up, and the chunk size
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            fns[c]()
            e0.record()
            for _ in range(5):
                fns[c]()
            e1.record()
            e1.synchronize()
            est[c] = e0.elapsed_time(e1) * 1e3 / 5
        for r in range(a.rounds):
            for c in (calls if r % 2 == 0 else calls[::-1]):
                row = {"shape": label, "call": c, "round": r, **one_round(torch, nvml, h, fns[c], a.seconds, est[c])}
                rows.append(row)
                print(json.dumps(row), flush=True)
        del q, k, v, fns, outs, ref
        torch.cuda.empty_cache()
    result = {"env": env, "checks_max_abs_diff": checks, "rows": rows, "summary": summarize(rows, calls)}
    print(json.dumps(result["summary"], indent=1))
    if a.output:
        pathlib.Path(a.output).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
