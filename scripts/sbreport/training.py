"""The training step: bench_e2e's e2e/train_step cases (a whole bf16 step of a Llama-style model with PyTorch's
RMSNorm and with ours, forward and backward) and train_profile's per-op tables of one step of each
(RESULTS_DIR/train_profile_<impl>.json): the step's time, tokens/s and peak memory, and what share of the step's
CUDA time the norms take, before (PyTorch's) and after (ours)."""
from __future__ import annotations

import json
from pathlib import Path

from .common import ReportError, fmt, usable

TRAIN_WORKLOAD = "train_step"
PROFILE_GLOB = "train_profile_*.json"
PROFILE_KEYS = ("config", "impl", "step_cuda_us", "norm_cuda_us", "norm_cuda_share", "ops")
TOP_OPS = 8  # rows of each side's per-op table


def _time(us: float) -> str:
    """µs below a millisecond, ms from there."""
    return fmt(us, "µs") if us < 1000 else fmt(us / 1000, "ms")


def load_profiles(results_dir: Path) -> dict:
    """{impl: train_profile's JSON} of RESULTS_DIR/train_profile_<impl>.json; {} where there is none. A file
    without the fields the section reads is a ReportError naming the file and the field."""
    profiles = {}
    for path in sorted(results_dir.glob(PROFILE_GLOB)):
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise ReportError(f"{path}: not JSON ({e})") from None
        missing = [k for k in PROFILE_KEYS if k not in data]
        if missing:
            raise ReportError(f"{path}: no {', '.join(missing)} (train_profile writes them)")
        profiles[data["impl"]] = data
    return profiles


def _step_rows(cases) -> list:
    """A line per (config, impl) of the cold training-step cases, PyTorch's first in each config."""
    by_config = {}
    for c in cases:
        if c.op == "e2e" and c.workload == TRAIN_WORKLOAD and c.mode == "cold" and usable(c):
            by_config.setdefault((c.dtype, c.shape_label), []).append(c)
    lines = []
    for (dtype, config), group in sorted(by_config.items()):
        torch = min((c for c in group if c.is_torch), key=lambda c: c.median_us, default=None)
        for c in sorted(group, key=lambda c: (not c.is_torch, c.impl)):
            k = c.counters
            speedup = f"{torch.median_us / c.median_us:.3f}×" if torch is not None and c is not torch else "–"
            tokens = f"{k['tokens_per_s']:,.0f}" if "tokens_per_s" in k else "–"
            memory = f"{k['peak_mem_bytes'] / 2**30:.2f} GiB" if "peak_mem_bytes" in k else "–"
            loss = f"{k['loss']:.4f}" if "loss" in k else "–"
            lines.append(f"| `{config}` | {dtype} | `{c.impl}` | {_time(c.median_us)} | {speedup} | "
                         f"{tokens} | {memory} | {loss} |")
    return lines


def _share_rows(profiles: dict) -> list:
    """A line per profiled implementation: the step's CUDA time, the norms' and their share."""
    return [f"| `{p['config']}` | `{impl}` | {_time(p['step_cuda_us'])} | {_time(p['norm_cuda_us'])} | "
            f"{p['norm_cuda_share']:.1%} |" for impl, p in sorted(profiles.items(), key=lambda kv: not kv[0].startswith("torch"))]


def _op_table(impl: str, profile: dict) -> list:
    ops = sorted(profile["ops"], key=lambda o: -o.get("self_cuda_us", 0))[:TOP_OPS]
    step = profile["step_cuda_us"] or float("nan")
    return [f"**`{impl}`**, the {len(ops)} ops with the most CUDA time of their own:", "",
            "| op | calls | CUDA time (own) | share of the step | CPU time | allocated |",
            "|---|---:|---:|---:|---:|---:|",
            *[f"| `{o['name']}` | {o.get('calls', 0)} | {_time(o.get('self_cuda_us', 0))} | "
              f"{o.get('self_cuda_us', 0) / step:.1%} | {_time(o.get('cpu_us', 0))} | "
              f"{o.get('cuda_alloc_bytes', 0) / 2**20:,.1f} MiB |" for o in ops], ""]


def training_section(cases, profiles: dict, detail: bool) -> list:
    """The section (summary: the step table and the norms' shares; detail: also each side's top ops); [] when the
    run has neither training-step cases nor profiles."""
    steps = _step_rows(cases)
    if not steps and not profiles:
        return []
    md = ["## The training step", "",
          "A whole bf16 training step (forward, backward, AdamW, fp32 master weights under bf16 autocast) of a "
          "Llama-style model, with PyTorch's RMSNorm and with ours (forward and backward kernels through an "
          "autograd function), everything else the same PyTorch ops; verified first (both losses fall and ours "
          "stays on PyTorch's curve), then timed cold, a fresh model per repetition.", ""]
    if steps:
        md += ["| config | dtype | implementation | step | speedup | tokens/s | peak memory | loss |",
               "|---|---|---|---:|---:|---:|---:|---:|", *steps, ""]
    if profiles:
        md += ["Where one step's time goes (`train_profile`, the Kineto profiler, one step of each after warm-up): "
               "the norms' CUDA time and their share of the step's, PyTorch's norms first, then ours.", "",
               "| config | implementation | step, CUDA time | norms, CUDA time | norms' share |",
               "|---|---|---:|---:|---:|", *_share_rows(profiles), ""]
        if detail:
            for impl, p in sorted(profiles.items(), key=lambda kv: not kv[0].startswith("torch")):
                md += _op_table(impl, p)
    return md
