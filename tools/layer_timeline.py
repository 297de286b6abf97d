#!/usr/bin/env python3
"""Investigation tool: one decoder layer's GPU timeline, kernel by kernel, with each attention, from CUPTI.

Why: bench_e2e times a whole Llama decode layer (ref/torch/torch_layer.h) with PyTorch's attention and with
ours, and a layer can cost more with our attention than the attention kernel alone explains. A layer's
time is its kernels' durations plus the gaps between them; this says which of them moved.

The layer is torch_layer.cpp's, op for op, in PyTorch (at::rms_norm, the seven projections, RoPE, the KV
cache write, SiLU, the residual adds), with its attention one of
    sdpa      F.scaled_dot_product_attention(enable_gqa=True): PyTorch's own choice of backend (cuDNN on the H200)
    solbench  --variant (decode_splitk) through bench/probe_capi.cpp's library by ctypes
    none      no attention (its output is q): the rest of the layer, as ref_rest_of_layer
Each replay is enqueued the way the suite's cold launches are (bench/harness/timer.h): an L2-sized write
(cold; a one-byte write hot), then a spin kernel that holds the GPU for twice the layer's host time, then
the layer, so the whole layer is queued before the GPU reaches it and the host's launch cost is not in
the timeline. CUPTI (torch.profiler) records every GPU op; the ops between one spin kernel and the write
before the next are one replay. Per position: the median start (from the replay's first op), duration and
gap before it (from the end of the op before; the first op's from the end of the spin). The attention's
ops are found against `none`: the longest common prefix and suffix of the op names; what lies between is
the attention's, and its window (end of the last prefix op to start of the first suffix op) is what the
attention costs inside the layer. Context `alone`: the attention alone on the layer's q and caches, enqueued
the same way, for its durations outside the layer in the same process.

Before timing, our attention's output is compared with SDPA's on the same q and caches (under 1/64: a guard
on the ctypes path and the layouts; the kernels' tests hold them to an fp64 reference).

    python3 tools/layer_timeline.py [-o timeline.json] [--shapes h8192_hq64_hkv8_d128_f28672_b1_q1_kv32768,...
                                      | --from-bench bench_e2e.json] [--attn sdpa,solbench,none]
                                      [--modes cold,hot] [--replays 30] [--variant decode_splitk] [--neighbours]
                                      [--side-stream] [--lib build/release/bench/libsolbench_probe.so]

--from-bench takes a run's bench_e2e JSON (e.g. results/<gpu>/logs/bench_e2e.json) and times its bf16
decode layers. --neighbours adds short sequences that end in the layer's two FFN up-projections after
each of several predecessors (SDPA, ours, the norms, Wo): the GEMMs after a PDL-launched attention can
run faster or slower than after another kernel, and the first one after an idle GPU slower.

Exit status: 0, 2 for a usage error or a failed check, 3 without an NVIDIA GPU.
"""
import argparse
import ctypes
import json
import os
import pathlib
import statistics
import sys
import tempfile
import threading
import time

# tools/ builds on the suite's scripts (results loader, build info, the cross-check's PyTorch calls).
sys.path[:0] = [str(pathlib.Path(__file__).resolve().parent), str(pathlib.Path(__file__).resolve().parents[1] / "scripts")]
from build_info import git_commit  # noqa: E402
from energy_probe import gpu_present  # noqa: E402
from sbresults import ResultsError, parse_shape  # noqa: E402

ATTNS = ("sdpa", "solbench", "none")
MODES = ("cold", "hot")
LAYER_KEYS = ("hidden", "heads_q", "heads_kv", "head_dim", "ffn", "batch", "q_len", "kv_len")
DEFAULT_SHAPE = "h8192_hq64_hkv8_d128_f28672_b1_q1_kv32768"  # Llama-3-70B, one request
GPU_CATS = ("kernel", "gpu_memset", "gpu_memcpy")
MARKER = "spin_kernel"  # torch.cuda._sleep's kernel
GUARD = 1 / 64
EPS, ROPE_THETA = 1e-5, 500000.0  # torch_layer.cpp's kEps, kRopeTheta (Llama 3)


def parse_layer_shape(label):
    """A bench_e2e decode layer label (h.._hq.._hkv.._d.._f.._b.._q1_kv..) as its eight sizes."""
    try:
        s = parse_shape(label)
    except ResultsError as e:
        raise ValueError(f"--shapes: {e}") from None
    missing = [k for k in LAYER_KEYS if k not in s]
    if missing or set(s) - set(LAYER_KEYS):
        raise ValueError(f"--shapes: {label!r} is not a layer shape (h.._hq.._hkv.._d.._f.._b.._q.._kv..)")
    if s["q_len"] != 1:
        raise ValueError(f"--shapes: {label!r}: decode layers only (q1); prefill is not timed here")
    if s["heads_q"] % s["heads_kv"] or s["heads_q"] * s["head_dim"] <= 0 or min(s.values()) < 1:
        raise ValueError(f"--shapes: {label!r}: heads_q must be a positive multiple of heads_kv")
    if s["kv_len"] < s["q_len"]:
        raise ValueError(f"--shapes: {label!r}: kv_len must be >= q_len")
    return s


def parse_list(text, allowed, what):
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad:
        raise ValueError(f"--{what}: unknown {', '.join(bad)}; choose from {', '.join(allowed)}")
    if not items or len(set(items)) != len(items):
        raise ValueError(f"--{what}: name each of {', '.join(allowed)} at most once, at least one")
    return items


def gpu_ops(trace):
    """The GPU ops of a Chrome trace (torch.profiler's export), sorted by start: name, cat, ts, dur (us)."""
    ops = [{"name": e["name"], "cat": e["cat"], "ts": float(e["ts"]), "dur": float(e["dur"]),
            "grid": e.get("args", {}).get("grid"), "block": e.get("args", {}).get("block")}
           for e in trace.get("traceEvents", []) if e.get("ph") == "X" and e.get("cat") in GPU_CATS]
    return sorted(ops, key=lambda o: o["ts"])


def replays(ops, marker=MARKER):
    """The ops of each replay: those after a marker kernel up to the one before the next marker (the write
    that precedes every marker is dropped), each with the marker's end. Raises when a replay is empty."""
    at = [i for i, o in enumerate(ops) if marker in o["name"]]
    out = []
    for i, j in zip(at, at[1:]):
        seg = ops[i + 1:j - 1]
        if not seg:
            raise ValueError(f"replay {len(out)}: no ops between marker kernels at {ops[i]['ts']:.1f} us")
        out.append({"marker_end": ops[i]["ts"] + ops[i]["dur"], "ops": seg})
    return out


def short_name(name, width=90):
    """A kernel's name without its argument list, cut to width."""
    base = name.split("(")[0] if not name.startswith("void ") else name[5:].split("(")[0]
    return base if len(base) <= width else base[:width - 3] + "..."


def summarize(reps):
    """Per position, the median start (from the replay's first op), duration and gap before it; per replay
    the span (first start to last end), busy (sum of durations), idle (span - busy) and the largest gap (a
    GPU waiting for the host: what the spin before each replay is for), as medians.
    Raises when the replays' op sequences differ."""
    if not reps:
        raise ValueError("no complete replay in the trace")
    names = [o["name"] for o in reps[0]["ops"]]
    for k, r in enumerate(reps[1:], 1):
        other = [o["name"] for o in r["ops"]]
        if other != names:
            diff = next((i for i, (a, b) in enumerate(zip(names, other)) if a != b), min(len(names), len(other)))
            raise ValueError(f"replay {k} differs from replay 0 at op {diff} ({len(other)} ops against {len(names)})")
    med = statistics.median
    ops = []
    for i, n in enumerate(names):
        def gap(r):
            prev_end = r["marker_end"] if i == 0 else r["ops"][i - 1]["ts"] + r["ops"][i - 1]["dur"]
            return r["ops"][i]["ts"] - prev_end
        ops.append({"name": short_name(n), "start_us": med(r["ops"][i]["ts"] - r["ops"][0]["ts"] for r in reps),
                    "dur_us": med(r["ops"][i]["dur"] for r in reps), "gap_us": med(gap(r) for r in reps),
                    "dur_min_us": min(r["ops"][i]["dur"] for r in reps),
                    "dur_max_us": max(r["ops"][i]["dur"] for r in reps),
                    "grid": reps[0]["ops"][i].get("grid"), "block": reps[0]["ops"][i].get("block")})
    spans = [r["ops"][-1]["ts"] + r["ops"][-1]["dur"] - r["ops"][0]["ts"] for r in reps]

    def largest_gap(r):  # from the end of everything before an op to its start (a PDL overlap is no gap)
        end, worst = r["marker_end"], float("-inf")
        for o in r["ops"]:
            worst = max(worst, o["ts"] - end)
            end = max(end, o["ts"] + o["dur"])
        return worst
    busy = [sum(o["dur"] for o in r["ops"]) for r in reps]
    return {"replays": len(reps), "ops": ops, "span_us": med(spans), "busy_us": med(busy),
            "max_gap_us": med(largest_gap(r) for r in reps),
            "idle_us": med(s - b for s, b in zip(spans, busy)), "names": names}


def common_ends(a, b):
    """The longest common prefix and suffix of two name lists, not overlapping in either."""
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    return p, s


def attention_window(reps, prefix, suffix):
    """Per replay, from the end of op prefix-1 to the start of the first suffix op; the median, and the
    medians of the ops between (the attention's own) and of the suffix's busy time."""
    med = statistics.median
    n = len(reps[0]["ops"])
    if prefix < 1 or suffix < 1 or prefix + suffix > n:
        raise ValueError(f"no attention window: prefix {prefix}, suffix {suffix} of {n} ops")

    def win(r):
        last = r["ops"][prefix - 1]
        return r["ops"][n - suffix]["ts"] - (last["ts"] + last["dur"])
    inner = [{"name": short_name(reps[0]["ops"][i]["name"]), "dur_us": med(r["ops"][i]["dur"] for r in reps)}
             for i in range(prefix, n - suffix)]
    return {"window_us": med(win(r) for r in reps), "attention_ops": inner,
            "prefix_span_us": med(r["ops"][prefix - 1]["ts"] + r["ops"][prefix - 1]["dur"] - r["ops"][0]["ts"]
                                  for r in reps),
            "suffix_busy_us": med(sum(o["dur"] for o in r["ops"][n - suffix:]) for r in reps)}


def compare(per_attn, base="none"):
    """Each attention's window against `base`'s layer: per attention, the prefix and suffix lengths and
    attention_window()'s figures."""
    if base not in per_attn:
        return {}
    out = {}
    base_names = per_attn[base]["summary"]["names"]
    for attn, got in per_attn.items():
        if attn == base:
            continue
        p, s = common_ends(got["summary"]["names"], base_names)
        out[attn] = {"prefix_ops": p, "suffix_ops": s, **attention_window(got["reps"], p, s)}
    return out


class Layer:
    """torch_layer.cpp's layer in PyTorch: same weights' law, same ops, its attention chosen per call."""

    def __init__(self, torch, s, dtype, seed, lib, variant):
        F = torch.nn.functional
        self.torch, self.F, self.s, self.dtype = torch, F, s, dtype
        dev = "cuda"
        torch.manual_seed(seed)
        h, hq, hkv, d, f = s["hidden"], s["heads_q"], s["heads_kv"], s["head_dim"], s["ffn"]

        def lin(o, i):
            return (torch.randn(o, i, device=dev) / i ** 0.5).to(dtype)
        self.wq, self.wk, self.wv, self.wo = lin(hq * d, h), lin(hkv * d, h), lin(hkv * d, h), lin(h, hq * d)
        self.wg, self.wu, self.wd = lin(f, h), lin(f, h), lin(h, f)
        self.n1 = (1 + 0.1 * torch.randn(h, device=dev)).to(dtype)
        self.n2 = (1 + 0.1 * torch.randn(h, device=dev)).to(dtype)
        b, n, kv = s["batch"], s["q_len"], s["kv_len"]
        self.x = torch.randn(b, n, h, device=dev).to(dtype)
        self.kc = torch.randn(b, kv, hkv, d, device=dev).to(dtype)
        self.vc = torch.randn(b, kv, hkv, d, device=dev).to(dtype)
        inv = ROPE_THETA ** (-torch.arange(0, d, 2, device=dev, dtype=torch.float32) / d)
        pos = torch.arange(kv - n, kv, device=dev, dtype=torch.float32)
        emb = torch.cat([torch.outer(pos, inv)] * 2, -1).view(1, n, 1, d)
        self.cos, self.sin = emb.cos().to(dtype), emb.sin().to(dtype)
        self.lib, self.variant = lib, variant.encode()
        self.err = ctypes.create_string_buffer(512)
        self.ws, self.ws_bytes, self.norm_fn = None, 0, None
        if lib is not None:
            self.norm_fn = lib.solbench_rmsnorm
            self.norm_fn.argtypes = [ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_double, ctypes.c_char_p,
                                     ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_char_p, ctypes.c_size_t]
            self.norm_fn.restype = ctypes.c_int
            need = ctypes.c_size_t(0)
            probe = torch.empty(b, n, hq, d, device=dev, dtype=dtype)
            if lib.solbench_attention_workspace(*self._args(probe, probe), ctypes.byref(need), self.err, len(self.err)):
                raise RuntimeError(self.err.value.decode())
            self.ws_bytes = need.value
            self.ws = torch.empty(max(need.value, 1), dtype=torch.uint8, device=dev)

    def _args(self, q, o):
        s = self.s
        return [self.variant, s["batch"], s["heads_q"], s["heads_kv"], s["head_dim"], s["q_len"], s["kv_len"], 0,
                b"bf16" if self.dtype == self.torch.bfloat16 else b"fp16",
                q.data_ptr(), self.kc.data_ptr(), self.vc.data_ptr(), o.data_ptr()]

    def our_norm(self, x, w):
        """The suite's vectorized RMSNorm (PDL-launched where the build says so) through the probe library."""
        y = self.torch.empty_like(x)
        rows = x.numel() // self.s["hidden"]
        if self.norm_fn(b"vectorized", rows, self.s["hidden"], EPS, b"bf16" if self.dtype == self.torch.bfloat16
                        else b"fp16", x.data_ptr(), w.data_ptr(), y.data_ptr(),
                        self.torch.cuda.current_stream().cuda_stream, self.err, len(self.err)):
            raise RuntimeError(self.err.value.decode())
        return y

    def rope(self, t):
        half = t.shape[-1] // 2
        return t * self.cos + self.torch.cat([-t[..., half:], t[..., :half]], -1) * self.sin

    def attention(self, attn, q):
        if attn == "none":
            return q
        if attn == "sdpa":
            return self.F.scaled_dot_product_attention(q.transpose(1, 2), self.kc.transpose(1, 2),
                                                       self.vc.transpose(1, 2), enable_gqa=True).transpose(1, 2)
        o = self.torch.empty_like(q)
        if self.lib.solbench_attention(*self._args(q, o), self.ws.data_ptr(), self.ws_bytes,
                                       self.torch.cuda.current_stream().cuda_stream, self.err, len(self.err)):
            raise RuntimeError(self.err.value.decode())
        return o

    def qkv(self, x):
        s, F = self.s, self.F
        b, n, kv = s["batch"], s["q_len"], s["kv_len"]
        h = F.rms_norm(x, (s["hidden"],), self.n1, EPS)
        q = self.rope(F.linear(h, self.wq).view(b, n, s["heads_q"], s["head_dim"]))
        k = self.rope(F.linear(h, self.wk).view(b, n, s["heads_kv"], s["head_dim"]))
        v = F.linear(h, self.wv).view(b, n, s["heads_kv"], s["head_dim"])
        self.kc[:, kv - n:kv].copy_(k)
        self.vc[:, kv - n:kv].copy_(v)
        return q

    def forward(self, attn):
        s, F = self.s, self.F
        b, n = s["batch"], s["q_len"]
        a = self.attention(attn, self.qkv(self.x)).reshape(b, n, s["heads_q"] * s["head_dim"])
        x1 = self.x + F.linear(a, self.wo)
        h2 = F.rms_norm(x1, (s["hidden"],), self.n2, EPS)
        return x1 + F.linear(F.silu(F.linear(h2, self.wg)) * F.linear(h2, self.wu), self.wd)


def neighbour_sequences(layer, q):
    """Short sequences that end in the layer's two FFN up-projections (Wg, Wu: the same GEMM shape), each
    after a different predecessor: what a kernel does to the GEMMs that follow it."""
    F, s = layer.F, layer.s
    b, n = s["batch"], s["q_len"]
    h2 = F.rms_norm(layer.x, (s["hidden"],), layer.n2, EPS)

    def gemms():
        F.linear(h2, layer.wg)
        F.linear(h2, layer.wu)

    def attn_then(attn, *mid):
        def fn():
            a = layer.attention(attn, q).reshape(b, n, s["heads_q"] * s["head_dim"])
            if "wo" in mid:
                F.linear(a, layer.wo)
            if "norm" in mid:
                F.rms_norm(layer.x, (s["hidden"],), layer.n2, EPS)
            gemms()
        return fn
    seqs = {"gemms": gemms, "torch_norm,gemms": lambda: (F.rms_norm(layer.x, (s["hidden"],), layer.n2, EPS), gemms()),
            "sdpa,gemms": attn_then("sdpa"), "sdpa,wo,norm,gemms": attn_then("sdpa", "wo", "norm")}
    if layer.lib is not None:
        seqs.update({"solbench,gemms": attn_then("solbench"), "solbench,norm,gemms": attn_then("solbench", "norm"),
                     "solbench,wo,norm,gemms": attn_then("solbench", "wo", "norm"),
                     "our_norm,gemms": lambda: (layer.our_norm(layer.x, layer.n2), gemms())})
    return seqs


def clock_sampler(torch):
    """A thread sampling NVML's SM clock every ms while it runs (None without pynvml): start(), stop() -> MHz list."""
    try:
        import pynvml as nvml
        from energy_probe import nvml_handle
        nvml.nvmlInit()
        h, _ = nvml_handle(torch, nvml)
    except Exception:  # noqa: BLE001 - the clock is context, not a result
        return None

    class Sampler:
        def start(self):
            self.mhz, self.run = [], True
            self.t = threading.Thread(target=self.loop, daemon=True)
            self.t.start()

        def loop(self):
            while self.run:
                self.mhz.append(nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM))
                time.sleep(0.001)

        def stop(self):
            self.run = False
            self.t.join()
            return self.mhz
    return Sampler()


def profile(torch, fn, cold, replays_n, flush, tiny, sampler):
    """fn's replays enqueued as the module docstring says, under torch.profiler; the trace's replays."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    host_us = (time.perf_counter() - t0) * 1e6
    torch.cuda.synchronize()
    cycles = int(max(2 * host_us, 50) * 2000)  # ~2 GHz: twice the host time at the H200's top clock or more

    def one():
        (flush if cold else tiny).zero_()
        torch.cuda._sleep(cycles)
        fn()
    one()
    torch.cuda.synchronize()
    if sampler:
        sampler.start()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(replays_n):
            one()
        (flush if cold else tiny).zero_()
        torch.cuda._sleep(cycles)
        torch.cuda.synchronize()
    mhz = sampler.stop() if sampler else []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    reps = replays(gpu_ops(trace))
    if len(reps) != replays_n:
        raise ValueError(f"{len(reps)} replays in the trace, {replays_n} enqueued")
    return reps, {"host_us": host_us, "spin_cycles": cycles,
                  "sm_mhz_median": statistics.median(mhz) if mhz else None, "sm_mhz_min": min(mhz) if mhz else None,
                  "sm_mhz_samples": len(mhz)}


def shapes_from_bench(path, dtype):
    """The decode layer labels of a bench_e2e JSON's cases in `dtype`, in order of first appearance."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"--from-bench: cannot read {path}: {e}") from None
    labels = {}
    for b in doc.get("benchmarks", []):
        parts = b.get("name", "").split("/")
        if len(parts) >= 6 and parts[0] == "e2e" and parts[2] == dtype and parts[3] == "decode":
            labels[parts[4]] = None
    if not labels:
        raise ValueError(f"--from-bench: {path} has no {dtype} decode layer (e2e/<impl>/{dtype}/decode/<shape>/...)")
    return list(labels)


def time_shape(torch, label, s, a, attns, modes, lib, sampler):
    """One layer shape's timelines (module docstring) as a JSON-able dict; raises RuntimeError when our
    attention's output fails the guard against SDPA's."""
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    layer = Layer(torch, s, dtype, 0, lib, a.variant)
    res = {"modes": {}}
    print(f"\n#### {label}", flush=True)
    q = layer.qkv(layer.x)
    if lib is not None:
        ours, ref = layer.attention("solbench", q).float(), layer.attention("sdpa", q).float()
        diff = (ours - ref).abs().max().item()
        res["check_max_abs_diff"] = diff
        if not diff < GUARD:
            raise RuntimeError(f"{label}: our attention differs from SDPA's by {diff:g} (guard {GUARD:g})")
    flush = torch.empty(torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size,
                        dtype=torch.uint8, device="cuda")
    tiny = torch.empty(1, dtype=torch.uint8, device="cuda")
    for mode in modes:
        per = {}
        for context in ("layer", "alone"):
            for attn in attns:
                if context == "alone" and attn == "none":
                    continue
                fn = (lambda at=attn: layer.forward(at)) if context == "layer" else (lambda at=attn: layer.attention(at, q))
                reps, info = profile(torch, fn, mode == "cold", a.replays, flush, tiny, sampler)
                summ = summarize(reps)
                per[f"{context}/{attn}"] = {"summary": summ, "reps": reps, "info": info}
                print(f"\n== {mode} {context}/{attn}: span {summ['span_us']:.1f} us, busy {summ['busy_us']:.1f}, "
                      f"idle {summ['idle_us']:.1f}, {len(summ['ops'])} ops, SM {info['sm_mhz_median']} MHz "
                      f"(min {info['sm_mhz_min']}), largest gap {summ['max_gap_us']:.1f} us", flush=True)
                for i, o in enumerate(summ["ops"]):
                    print(f"  {i:3d} {o['start_us']:9.2f} {o['dur_us']:8.2f} [{o['dur_min_us']:.2f}, {o['dur_max_us']:.2f}]"
                          f" gap {o['gap_us']:6.2f} grid {o['grid']} block {o['block']}  {o['name']}")
        layers = {k.split("/")[1]: v for k, v in per.items() if k.startswith("layer/")}
        cmp = compare(layers)
        for attn, c in cmp.items():
            print(f"\n{mode} {attn} against none: prefix {c['prefix_ops']} ops ({c['prefix_span_us']:.1f} us), "
                  f"window {c['window_us']:.2f} us, suffix busy {c['suffix_busy_us']:.1f} us; attention ops: "
                  + ", ".join(f"{o['name']} {o['dur_us']:.2f}" for o in c["attention_ops"]))
        res["modes"][mode] = {"timelines": {k: {"summary": {x: y for x, y in v["summary"].items() if x != "names"},
                                                "info": v["info"]} for k, v in per.items()},
                              "against_none": cmp}
    if a.neighbours:
        rows = {}
        for name, fn in neighbour_sequences(layer, q).items():
            reps, info = profile(torch, fn, True, a.replays, flush, tiny, sampler)
            summ = summarize(reps)
            rows[name] = {"ops": [{k: o[k] for k in ("name", "dur_us", "dur_min_us", "dur_max_us", "gap_us", "grid")}
                                  for o in summ["ops"]], "span_us": summ["span_us"]}
            last = summ["ops"][-2:]
            print(f"neighbours {name:24s} Wg {last[0]['dur_us']:7.2f} [{last[0]['dur_min_us']:.1f}, "
                  f"{last[0]['dur_max_us']:.1f}]  Wu {last[1]['dur_us']:7.2f} [{last[1]['dur_min_us']:.1f}, "
                  f"{last[1]['dur_max_us']:.1f}]  ops " + ", ".join(f"{o['name'][:28]} {o['dur_us']:.1f}"
                                                               for o in summ["ops"][:-2]), flush=True)
        res["neighbours"] = rows
    del layer, flush
    torch.cuda.empty_cache()
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", help="write the timelines and the comparison as JSON here")
    ap.add_argument("--shapes", default=DEFAULT_SHAPE, help="decode layer labels, comma-separated")
    ap.add_argument("--from-bench", metavar="BENCH_E2E_JSON",
                    help="the decode layers of this bench_e2e JSON in --dtype (instead of --shapes)")
    ap.add_argument("--attn", default="sdpa,solbench,none")
    ap.add_argument("--modes", default="cold,hot")
    ap.add_argument("--replays", type=int, default=30)
    ap.add_argument("--variant", default="decode_splitk")
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"))
    ap.add_argument("--lib", help="libsolbench_probe.so (default: the newest under build/)")
    ap.add_argument("--neighbours", action="store_true",
                    help="also time the FFN up-projections after each of several predecessors (cold)")
    ap.add_argument("--side-stream", action="store_true",
                    help="enqueue on a stream of its own (as the suite does) rather than PyTorch's default stream")
    a = ap.parse_args()
    try:
        labels = shapes_from_bench(a.from_bench, a.dtype) if a.from_bench else \
            [t.strip() for t in a.shapes.split(",") if t.strip()]
        if not labels:
            raise ValueError("--shapes: empty list")
        shapes = {label: parse_layer_shape(label) for label in labels}
        attns, modes = parse_list(a.attn, ATTNS, "attn"), parse_list(a.modes, MODES, "modes")
        if not 3 <= a.replays <= 1000:
            raise ValueError(f"--replays must be from 3 to 1000, got {a.replays}")
    except ValueError as e:
        print(f"layer_timeline: {e}", file=sys.stderr)
        return 2
    if not gpu_present():
        print("layer_timeline: no NVIDIA GPU here (nvidia-smi -L failed)", file=sys.stderr)
        return 3
    lib, lib_path = None, None
    if "solbench" in attns:
        from energy_probe import find_probe_lib, probe_lib
        lib_path = a.lib or find_probe_lib(str(pathlib.Path(__file__).resolve().parent.parent))
        if not (lib_path and os.path.isfile(lib_path)):
            print(f"layer_timeline: attention solbench needs libsolbench_probe.so: {lib_path or 'none under build/'}"
                  " (build the suite, or give --lib)", file=sys.stderr)
            return 2
        lib = probe_lib(lib_path)
    import torch
    if a.side_stream:
        torch.cuda.set_stream(torch.cuda.Stream())
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    uuid = str(props.uuid)
    env = {"gpu_name": torch.cuda.get_device_name(), "gpu_uuid": uuid if uuid.startswith("GPU-") else "GPU-" + uuid,
           "torch_version": torch.__version__, "dtype": a.dtype, "variant": a.variant, "replays": a.replays,
           "side_stream": a.side_stream, "lib": repo_relative(lib_path), "l2_bytes": props.L2_cache_size,
           "git_commit": git_commit(pathlib.Path(__file__).resolve().parent.parent),
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "command": " ".join(["python3"] + [repo_relative(x) for x in sys.argv])}
    print(json.dumps(env), flush=True)
    sampler = clock_sampler(torch)
    out = {"env": env, "shapes": {}}
    try:
        for label, s in shapes.items():
            out["shapes"][label] = time_shape(torch, label, s, a, attns, modes, lib, sampler)
    except RuntimeError as e:
        print(f"layer_timeline: {e}", file=sys.stderr)
        return 2
    if a.output:
        with open(a.output, "w") as f:
            json.dump(out, f, indent=1)
    return 0


def repo_relative(arg):
    """arg with the repository's root taken off a path inside it (the command reads the same on any checkout);
    other arguments, options included (--opt=/path too), as they are."""
    if arg is None:
        return None
    root = str(pathlib.Path(__file__).resolve().parent.parent) + os.sep
    head, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    return head + eq + (value[len(root):] if value.startswith(root) else value)


if __name__ == "__main__":
    sys.exit(main())
