"""The plots (matplotlib, Agg): per op, workload, dtype and mode a metric against each swept shape field,
one line per implementation; the split-count sweep; the roofline of every case."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import sbresults

from .common import (CEILING_NAME, CEILING_OF, TIME_ONLY_REFERENCES, headline_metric, impl_order, in_main_tables,
                     is_triton_impl, slug, title, usable)

METRIC_LABEL = {"GB/s": "bandwidth (GB/s)", "TFLOP/s": "throughput (TFLOP/s)"}
METRIC_SLUG = {"GB/s": "gbps", "TFLOP/s": "tflops"}
TOKEN_OF = {name: token for token, name in sbresults.SHAPE_TOKENS.items()}
DPI = 80  # the committed plots stay small: results/<gpu>/ travels with every GPU command


@dataclass(frozen=True)
class Sweep:
    """A plot "metric vs shape field x, one line per impl", the other shape fields held fixed.
    moving: alternative sets of fields that may move with x; when one holds "batch", batch × x
    (tokens per batch, the FlashAttention papers' convention) is held instead. panels: one
    subplot per value of these fields."""
    op: str
    workload: str
    x: str
    xlabel: str
    moving: tuple = ((),)
    panels: tuple = ()


SWEEPS = [
    Sweep("rmsnorm", "", "hidden", "hidden size (elements)"),
    Sweep("rmsnorm", "", "rows", "tokens (rows)"),
    Sweep("attention", "prefill", "q_len", "sequence length S = q_len = kv_len (tokens)",
          moving=(("kv_len",), ("kv_len", "batch")), panels=("head_dim", "causal")),
    Sweep("attention", "decode", "kv_len", "KV length (tokens)"),
    Sweep("attention", "decode", "batch", "batch (sequences)"),
    Sweep("e2e", "decode", "kv_len", "KV length (tokens)"),
]


def _held(shape: dict, x: str, moving: tuple) -> tuple:
    fixed = tuple((k, v) for k, v in shape.items() if k != x and k not in moving)
    return fixed + ((("tokens", shape["batch"] * shape[x]),) if "batch" in moving else ())


def sweep(cases, s: Sweep) -> tuple[dict, list]:
    """The values held fixed (shape fields, or tokens per batch) with the most distinct x values
    among good cases (ties: the most cases, i.e. implementations), and its cases."""
    by_fixed = {}
    for moving in s.moving:
        for c in cases:
            if usable(c) and s.x in c.shape:
                by_fixed.setdefault(_held(c.shape, s.x, moving), []).append(c)
    if not by_fixed:
        return {}, []
    fixed, chosen = max(by_fixed.items(),
                        key=lambda kv: (len({c.shape[s.x] for c in kv[1]}), len(kv[1]), kv[0]))
    return dict(fixed), chosen


def held_text(fixed: dict, flags=()) -> str:
    """E.g. "at hq16 hkv16 d128 causal, batch × S = 16,384"; a false flag is named only when it
    is in `flags` (what splits the panels)."""
    parts = [(k if v else f"non-{k}") if isinstance(v, bool) else f"{TOKEN_OF.get(k, k)}{v}"
             for k, v in fixed.items() if k != "tokens" and (v is not False or k in flags)]
    tokens = [f"batch × S = {fixed['tokens']:,}"] if "tokens" in fixed else []
    return ", ".join(["at " + " ".join(parts), *tokens])


def sweep_panels(cases, s: Sweep) -> list:
    """[(what is held, cases)]: one per value of the sweep's panel fields that has at least two
    x values."""
    by_panel = {}
    for c in cases:
        by_panel.setdefault(tuple(c.shape.get(f) for f in s.panels), []).append(c)
    panels = []
    for value in sorted(by_panel, key=lambda v: [-1 if x is None else x for x in v]):
        fixed, chosen = sweep(by_panel[value], s)
        if len({c.shape[s.x] for c in chosen}) >= 2:
            panels.append((held_text(fixed, s.panels), chosen))
    return panels


# The reference lines are thin and black, dash-dot (the dotted line is the copy ceiling's), but for references
# drawn in the same plot as another: ref_kv_stream beside ref_kv_read.
REF_DASHES = {"ref_kv_stream": (0, (6, 2))}


class Plotter:
    """Writes PNGs with matplotlib (Agg); one colour per implementation across all plots."""

    def __init__(self, out_dir: Path, impls: list):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter, LogLocator
        self.plt, self.formatter, self.out_dir = plt, FuncFormatter(lambda v, _: f"{v:g}"), out_dir
        self.log_125 = LogLocator(base=10, subs=(1, 2, 5))
        tab20 = plt.get_cmap("tab20").colors
        palette = tab20[0::2] + tab20[1::2]  # 10 strong colours, then their light partners
        self.color = {impl: palette[i % len(palette)] for i, impl in enumerate(impls)}
        self.written = []
        out_dir.mkdir(parents=True, exist_ok=True)

    def _style(self, impl: str) -> dict:
        if impl.startswith(sbresults.REF_PREFIX):  # a reference: a thin black line, no markers
            return {"color": "black", "linestyle": REF_DASHES.get(impl, "-."), "linewidth": 1, "marker": None,
                    "label": impl}
        torch, triton = impl.startswith(sbresults.TORCH_PREFIX), is_triton_impl(impl)
        return {"color": self.color.get(impl), "linestyle": "--" if torch else ":" if triton else "-",
                "marker": "s" if torch else "^" if triton else "o", "markersize": 4, "label": impl}

    def _save(self, fig, name: str) -> str:
        fig.tight_layout()
        fig.savefig(self.out_dir / name, dpi=DPI, bbox_inches="tight")
        self.plt.close(fig)
        self.written.append(name)
        return name

    def _legend(self, fig, axes) -> None:
        """One legend right of all panels, each label once."""
        entries = {}
        for ax in axes:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                entries.setdefault(label, handle)
        fig.legend(entries.values(), entries.keys(), fontsize=8, loc="center left",
                   bbox_to_anchor=(1.0, 0.5), frameon=False)

    def _log2_x(self, ax) -> None:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(self.formatter)
        ax.grid(True, which="major", alpha=0.3)

    def metric_vs_field(self, panels: list, field: str, metric: str, name: str, *, title: str,
                        xlabel: str, ceiling: float | None = None, ceiling_label: str = "") -> str:
        """One subplot per (subtitle, cases) panel, one line per implementation: counter `metric`
        against shape[field], log-2 x axis, optional horizontal ceiling, y shared. Generic over
        ops: RMSNorm GB/s vs hidden, prefill TFLOP/s vs sequence length per head dim and
        causality, decode GB/s vs KV length or batch."""
        ncols = min(2, len(panels))
        nrows = math.ceil(len(panels) / ncols)
        fig, axes = self.plt.subplots(nrows, ncols, figsize=(3.2 + 4.3 * ncols, 1.2 + 3.4 * nrows),
                                      sharey=True, squeeze=False)
        for ax, (subtitle, cases) in zip(axes.flat, panels):
            for impl in impl_order(cases):
                points = sorted((c.shape[field], c.counters[metric]) for c in cases
                                if c.impl == impl and metric in c.counters)
                if points:
                    ax.plot(*zip(*points), **self._style(impl))
            if ceiling:
                ax.axhline(ceiling, color="black", linewidth=1, linestyle=":", label=ceiling_label)
            self._log2_x(ax)
            ax.set_ylim(bottom=0)
            ax.set_title(subtitle, fontsize=9)
            ax.set(xlabel=f"{xlabel}, log-2 axis", ylabel=METRIC_LABEL[metric])
        for ax in axes.flat[len(panels):]:
            ax.set_visible(False)
        fig.suptitle(title)
        self._legend(fig, axes.flat)
        return self._save(fig, name)

    def split_sweep(self, sweeps: list, name: str, title: str) -> str:
        """Time against forced split count, log-2 x, log y, one line per shape; a star where the
        variant's own heuristic landed."""
        fig, ax = self.plt.subplots(figsize=(7.5, 4.6))
        colors = self.plt.get_cmap("tab10").colors
        star = {"linestyle": "none", "marker": "*", "markersize": 13, "markeredgecolor": "black"}
        for i, s in enumerate(sweeps):
            color = colors[i % len(colors)]
            points = sorted((n, c.median_us) for n, c in s.forced.items() if usable(c))
            if points:
                ax.plot(*zip(*points), color=color, marker="o", markersize=4, label=s.shape_label)
            if s.heuristic_splits() is not None:
                ax.plot(s.heuristic_splits(), s.heuristic.median_us, **star, color=color)
        ax.plot([], [], **star, color="white", label="heuristic's choice (the variant's own case)")
        self._log2_x(ax)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(self.log_125)
        ax.yaxis.set_major_formatter(self.formatter)
        ax.set(title=title, xlabel="forced split count N, log-2 axis",
               ylabel="median time (µs), log axis")
        self._legend(fig, [ax])
        return self._save(fig, name)

    def roofline(self, cases, copy_gbps: float | None, gemm_tflops: float | None, name: str,
                 title: str) -> str | None:
        """Achieved TFLOP/s against arithmetic intensity (flops / minimal bytes), log-log, with
        the measured copy (slope) and GEMM (flat) ceilings."""
        points = {}
        for c in cases:
            flops, nbytes = c.counters.get("flops", 0), c.counters.get("bytes", 0)
            if usable(c) and flops > 0 and nbytes > 0:
                points.setdefault(c.impl, []).append((flops / nbytes, flops / c.median_us / 1e6))
        if not points:
            return None
        fig, ax = self.plt.subplots(figsize=(7.5, 4.6))
        for impl in impl_order(cases):
            if impl in points:
                style = self._style(impl) | {"linestyle": "none", "markersize": 5}
                ax.plot(*zip(*points[impl]), **style)
        xs = [x for pts in points.values() for x, _ in pts]
        lo, hi = min(xs) / 4, max(xs) * 4
        if copy_gbps and gemm_tflops:
            ridge = gemm_tflops * 1e3 / copy_gbps
            lo, hi = min(lo, ridge / 4), max(hi, ridge * 4)
        if copy_gbps:
            top = min(hi, ridge) if gemm_tflops else hi
            ax.plot([lo, top], [lo * copy_gbps / 1e3, top * copy_gbps / 1e3], color="black",
                    linewidth=1, label=f"copy ceiling {copy_gbps:,.0f} GB/s")
        if gemm_tflops:
            ax.plot([ridge if copy_gbps else lo, hi], [gemm_tflops] * 2, color="black",
                    linewidth=1, linestyle="--", label=f"GEMM ceiling {gemm_tflops:,.0f} TFLOP/s")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set(title=title, xlabel="arithmetic intensity (FLOP / byte)",
               ylabel="achieved TFLOP/s")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        return self._save(fig, name)


def group_plots(plotter: Plotter, run: sbresults.Run, key: tuple, cases) -> list:
    """The sweep plots of one results table; their file names."""
    op, workload, dtype, mode = key
    metric = headline_metric(op, workload)
    ceiling = run.ceiling(CEILING_OF[metric])
    cases = [c for c in cases if c.impl not in TIME_ONLY_REFERENCES]
    names = []
    for s in SWEEPS:
        panels = sweep_panels(cases, s) if (s.op, s.workload) == (op, workload) else []
        if panels:
            names.append(plotter.metric_vs_field(
                panels, s.x, metric, f"{slug(key)}_{METRIC_SLUG[metric]}_vs_{s.x}.png",
                title=f"{title(key)}: {metric} vs {s.x}", xlabel=s.xlabel,
                ceiling=ceiling,
                ceiling_label=f"{CEILING_NAME[CEILING_OF[metric]]} ceiling {ceiling:,.0f} "
                              f"{metric} (measured)" if ceiling else ""))
    return names


def rooflines(plotter: Plotter, run: sbresults.Run) -> list:
    """One roofline per mode over every case of the main tables; their file names."""
    main = [c for c in run.cases if in_main_tables(c) and c.impl not in TIME_ONLY_REFERENCES]
    names = [plotter.roofline([c for c in main if c.mode == mode], run.ceiling("copy_gbps"),
                              run.ceiling("gemm_tflops"), f"roofline_{mode}.png", f"roofline, all {mode} cases")
             for mode in dict.fromkeys(c.mode for c in main)]
    return [n for n in names if n]
