#!/usr/bin/env python3
"""Write RESULTS_DIR/REPORT.md and RESULTS_DIR/plots/*.png from a solbench run.

The run is RESULTS_DIR/latest.json unless --run names the file(s) or directory of one run. The
report holds the environment table, the command that reproduces the run, one table per op,
workload, dtype and mode (a row per shape, a cell per implementation: median time, GB/s or
TFLOP/s, % of speed of light, speedup over the best PyTorch baseline at that shape, verification
error), the plots, and RESULTS_DIR/NOTES.md (hand-written) verbatim. Both REPORT.md and plots/
are generated: PNGs in plots/ that this run did not produce are removed.
"""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sbresults  # noqa: E402

MODE_ORDER = ("cold", "hot")
CEILING_OF = {"GB/s": "copy_gbps", "TFLOP/s": "gemm_tflops"}
SLUG = {"GB/s": "gbps", "TFLOP/s": "tflops"}
TOKEN_OF = {name: token for token, name in sbresults.SHAPE_TOKENS.items()}

# (op, workload, x field, fields that move with x, x label): the sweeps plotted as
# "metric vs shape field, one line per impl", with the other shape fields held fixed.
SWEEPS = [
    ("rmsnorm", "", "hidden", (), "hidden size"),
    ("rmsnorm", "", "rows", (), "tokens (rows)"),
    ("attention", "prefill", "q_len", ("kv_len",), "sequence length (q_len = kv_len)"),
    ("attention", "decode", "kv_len", (), "KV length"),
    ("attention", "decode", "batch", (), "batch"),
]

ENV_ROWS = [  # (label, context key, unit)
    ("GPU", "gpu_name", ""), ("SMs", "sm_count", ""), ("L2", "l2_bytes", "MiB"),
    ("SM clock", "sm_clock_mhz", "MHz"), ("memory clock", "mem_clock_mhz", "MHz"),
    ("driver", "driver", ""), ("CUDA runtime", "cuda_runtime", ""),
    ("PyTorch", "torch_version", ""), ("git commit", "git_commit", ""),
    ("kernels fingerprint", "kernels_fingerprint", ""), ("build type", "build_type", ""),
    ("Google Benchmark library", "library_build_type", ""),
    ("copy ceiling (measured, read + write)", "copy_gbps", "GB/s"),
    ("GEMM ceiling (measured, cuBLAS bf16)", "gemm_tflops", "TFLOP/s"),
    ("date", "date", ""), ("host", "host_name", ""),
]


def headline_metric(op: str, workload: str) -> str:
    return "TFLOP/s" if (op, workload) == ("attention", "prefill") else "GB/s"


def impl_order(cases) -> list:
    """Our variants in order of first appearance, then the PyTorch baselines."""
    impls = list(dict.fromkeys(c.impl for c in cases))
    return [i for i in impls if not i.startswith(sbresults.TORCH_PREFIX)] + \
           [i for i in impls if i.startswith(sbresults.TORCH_PREFIX)]


def shape_key(case) -> tuple:
    return tuple(case.shape.get(f, -1) for f in sbresults.SHAPE_FIELDS) + (case.shape_label,)


def group_cases(cases) -> dict:
    """(op, workload, dtype, mode) -> cases: ops and workloads in order of first appearance,
    then cold before hot."""
    groups = {}
    for c in cases:
        if c.op != "floor":
            groups.setdefault((c.op, c.workload, c.dtype, c.mode), []).append(c)
    first = {k: i for i, k in enumerate(groups)}
    ops_workloads = list(dict.fromkeys(k[:2] for k in groups))
    mode_rank = {m: i for i, m in enumerate(MODE_ORDER)}
    return dict(sorted(groups.items(), key=lambda kv: (
        ops_workloads.index(kv[0][:2]), mode_rank.get(kv[0][3], len(MODE_ORDER)), first[kv[0]])))


def _fmt(x: float, unit: str) -> str:
    digits = 0 if abs(x) >= 100 else 1 if abs(x) >= 10 else 2
    return f"{x:,.{digits}f} {unit}".rstrip()


def _short(message: str, limit: int = 70) -> str:
    message = message.replace("|", "\\|").replace("\n", " ")
    return message if len(message) <= limit else message[:limit - 1] + "…"


def cell(case, metric: str, best_torch_us: float | None, fastest: bool) -> str:
    if case is None:
        return "–"
    if case.skipped:
        return f"skipped: {_short(case.error.removeprefix(sbresults.SKIP_PREFIX).strip())}"
    if not case.ok:
        return f"**FAILED**: {_short(case.error)}"
    time = _fmt(case.median_us, "µs")
    lines = [f"**{time}**" if fastest else time]
    rate = [_fmt(case.counters[metric], metric)] if metric in case.counters else []
    if "sol_pct" in case.counters:
        sol = case.counters["sol_pct"]
        rate.append(f"{sol:.{0 if sol >= 10 else 1}f}% SoL")
    lines.append(" · ".join(rate))
    tail = [f"{best_torch_us / case.median_us:.2f}×"] if best_torch_us else []
    if "err" in case.counters:
        tail.append(f"err {case.counters['err']:.2g}")
    lines.append(" · ".join(tail))
    return "<br>".join(line for line in lines if line)


def table(cases, metric: str) -> list:
    impls = impl_order(cases)
    shapes = {}
    for c in sorted(cases, key=shape_key):
        shapes.setdefault(c.shape_label, {})[c.impl] = c
    out = ["| shape | " + " | ".join(f"`{i}`" for i in impls) + " |",
           "|---|" + "---:|" * len(impls)]
    for label, by_impl in shapes.items():
        ok = [c for c in by_impl.values() if c.ok]
        best_torch = min((c.median_us for c in ok if c.is_torch), default=None)
        fastest = min(ok, key=lambda c: c.median_us, default=None)
        cells = [cell(by_impl.get(i), metric, best_torch, by_impl.get(i) is fastest)
                 for i in impls]
        out.append(f"| `{label}` | " + " | ".join(cells) + " |")
    return out


def _context_value(value, unit: str) -> str:
    if value is None or value == "":
        return "*(not recorded)*"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return f"{value} {unit}".rstrip()
    if unit == "MiB":
        return f"{number / 2**20:g} MiB"
    return f"{number:,.0f} {unit}" if unit in CEILING_OF else f"{value} {unit}".rstrip()


def environment(run: sbresults.Run) -> list:
    out = ["| | |", "|---|---|"]
    out += [f"| {label} | {_context_value(run.context.get(key), unit)} |"
            for label, key, unit in ENV_ROWS]
    floors = [f"{c.mode} {_fmt(c.median_us, 'µs')}" for c in run.cases if c.op == "floor" and c.ok]
    if floors:
        out.append(f"| launch floor (empty kernel, median) | {', '.join(floors)} |")
    out.append(f"| result files | {', '.join(f'`{f}`' for f in run.files)} |")
    return out


def warnings(run: sbresults.Run) -> list:
    ctx, out = run.context, []
    if ctx.get("build_type") and ctx["build_type"] != "Release":
        out.append(f"solbench was built as {ctx['build_type']}, not Release.")
    if ctx.get("library_build_type") == "debug":
        out.append("Google Benchmark is a debug build.")
    failed = [c for c in run.cases if c.failed]
    if failed:
        out.append(f"{len(failed)} case(s) failed: " + ", ".join(f"`{c.name}`" for c in failed))
    return out


# ---------------------------------------------------------------- plots

def sweep(cases, x_field: str, moving=()) -> tuple[dict, list]:
    """The fixed values of the other shape fields with the most distinct x values, and its cases."""
    by_fixed = {}
    for c in cases:
        if c.ok and x_field in c.shape:
            fixed = tuple((k, v) for k, v in c.shape.items() if k != x_field and k not in moving)
            by_fixed.setdefault(fixed, []).append(c)
    if not by_fixed:
        return {}, []
    fixed, chosen = max(by_fixed.items(),
                        key=lambda kv: (len({c.shape[x_field] for c in kv[1]}), kv[0]))
    return dict(fixed), chosen


class Plotter:
    """Writes PNGs with matplotlib (Agg); one colour per implementation across all plots."""

    def __init__(self, out_dir: Path, impls: list):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
        self.plt, self.formatter, self.out_dir = plt, FuncFormatter(lambda v, _: f"{v:g}"), out_dir
        tab20 = plt.get_cmap("tab20").colors
        palette = tab20[0::2] + tab20[1::2]  # 10 strong colours, then their light partners
        self.color = {impl: palette[i % len(palette)] for i, impl in enumerate(impls)}
        self.written = []
        out_dir.mkdir(parents=True, exist_ok=True)

    def _style(self, impl: str) -> dict:
        torch = impl.startswith(sbresults.TORCH_PREFIX)
        return {"color": self.color.get(impl), "linestyle": "--" if torch else "-",
                "marker": "s" if torch else "o", "markersize": 4, "label": impl}

    def _save(self, fig, name: str) -> str:
        fig.tight_layout()
        fig.savefig(self.out_dir / name, dpi=130)
        self.plt.close(fig)
        self.written.append(name)
        return name

    def metric_vs_field(self, cases, field: str, metric: str, name: str, *, title: str,
                        xlabel: str, ceiling: float | None = None, ceiling_label: str = "") -> str:
        """One line per implementation: counter `metric` against shape[field], log-2 x axis,
        optional horizontal ceiling. Generic over ops: RMSNorm GB/s vs hidden, attention prefill
        TFLOP/s vs sequence length, decode GB/s vs KV length or batch."""
        fig, ax = self.plt.subplots(figsize=(7.5, 4.6))
        for impl in impl_order(cases):
            points = sorted((c.shape[field], c.counters[metric]) for c in cases
                            if c.impl == impl and metric in c.counters)
            if points:
                ax.plot(*zip(*points), **self._style(impl))
        if ceiling:
            ax.axhline(ceiling, color="black", linewidth=1, linestyle=":", label=ceiling_label)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(self.formatter)
        ax.set_ylim(bottom=0)
        ax.set(title=title, xlabel=xlabel, ylabel=metric)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        return self._save(fig, name)

    def roofline(self, cases, copy_gbps: float | None, gemm_tflops: float | None, name: str,
                 title: str) -> str | None:
        """Achieved TFLOP/s against arithmetic intensity (flops / minimal bytes), log-log, with
        the measured copy (slope) and GEMM (flat) ceilings."""
        points = {}
        for c in cases:
            flops, nbytes = c.counters.get("flops", 0), c.counters.get("bytes", 0)
            if c.ok and flops > 0 and nbytes > 0:
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
    op, workload, dtype, mode = key
    metric = headline_metric(op, workload)
    ceiling = run.ceiling(CEILING_OF[metric])
    names = []
    for s_op, s_workload, field, moving, xlabel in SWEEPS:
        if (s_op, s_workload) != (op, workload):
            continue
        fixed, chosen = sweep(cases, field, moving)
        if len({c.shape[field] for c in chosen}) < 2:
            continue
        held = " ".join(f"{TOKEN_OF.get(k, k)}{v}" if not isinstance(v, bool) else k
                        for k, v in fixed.items() if v is not False)
        slug = "_".join(p for p in (op, workload, dtype, mode) if p)
        names.append(plotter.metric_vs_field(
            chosen, field, metric, f"{slug}_{SLUG[metric]}_vs_{field}.png",
            title=f"{' '.join(p for p in key if p)}: {metric} vs {field}\nat {held}",
            xlabel=f"{xlabel}, log-2 axis", ceiling=ceiling,
            ceiling_label=f"{CEILING_OF[metric].split('_')[0]} ceiling {ceiling:,.0f} {metric} "
                          "(measured)" if ceiling else ""))
    return names


# ---------------------------------------------------------------- report

def render(run: sbresults.Run, results_dir: Path, command: str, plotter: Plotter | None) -> str:
    ctx = run.context
    md = [f"<!-- GENERATED by `{command}`: do not edit by hand. -->",
          f"# solbench results: {ctx.get('gpu_name', 'unknown GPU')}", "",
          f"Generated by `{command}` from the Google Benchmark JSON listed below. **Do not edit "
          "this file by hand**: rerun the command. Explanations go in `NOTES.md` next to it, "
          "which is inserted at the end.", "",
          "## Environment", "", *environment(run), "",
          "Reproduce the run:", "", "```sh", ctx.get("command", "(the run did not record its "
                                                   "command)"), "```", ""]
    notes = warnings(run)
    if notes:
        md += ["**Warnings:**", "", *[f"- {n}" for n in notes], ""]
    md += ["## Results", "",
           "Each cell: median time over the repetitions (the fastest in the row in bold) · "
           "throughput against minimal bytes (or FLOPs) · % of speed of light against the "
           "ceilings measured in the same run · speedup over the best PyTorch baseline at that "
           "shape · verification error relative to tolerance (≤ 1 passes). cold = L2 flushed "
           "before each launch, hot = back-to-back launches in a CUDA graph; never compare the "
           "two.", ""]
    for key, cases in group_cases(run.cases).items():
        metric = headline_metric(key[0], key[1])
        md += [f"### {' · '.join(p for p in key if p)}", "", *table(cases, metric), ""]
        for name in group_plots(plotter, run, key, cases) if plotter else []:
            md += [f"![{name}](plots/{name})", ""]
    if plotter:
        rooflines = []
        for mode in dict.fromkeys(c.mode for c in run.cases if c.op != "floor"):
            name = plotter.roofline([c for c in run.cases if c.mode == mode and c.op != "floor"],
                                    run.ceiling("copy_gbps"), run.ceiling("gemm_tflops"),
                                    f"roofline_{mode}.png", f"roofline, all {mode} cases")
            if name:
                rooflines += [f"![{name}](plots/{name})", ""]
        if rooflines:
            md += ["## Roofline", "", "Achieved TFLOP/s against FLOPs per minimal byte; the lines "
                   "are the measured copy and GEMM ceilings.", "", *rooflines]
    md += ["## Notes", ""]
    notes_file = results_dir / "NOTES.md"
    if notes_file.is_file():
        md += [notes_file.read_text().rstrip(), ""]
    else:
        md += [f"*No `NOTES.md` in `{results_dir}`: hand-written notes go there.*", ""]
    return "\n".join(md)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results_dir", metavar="RESULTS_DIR", help="e.g. results/h200")
    parser.add_argument("--run", nargs="+", metavar="JSON",
                        help="file(s) or directory of the run (default RESULTS_DIR/latest.json)")
    parser.add_argument("--no-plots", action="store_true", help="write REPORT.md without plots")
    args = parser.parse_args(argv)
    results_dir = Path(args.results_dir)
    try:
        run = sbresults.load(args.run or [results_dir / "latest.json"])
    except (sbresults.ResultsError, OSError) as e:
        print(f"report.py: error: {e}", file=sys.stderr)
        return 2
    plotter = None
    if not args.no_plots:
        try:
            plotter = Plotter(results_dir / "plots",
                              impl_order([c for c in run.cases if c.op != "floor"]))
        except ImportError:
            print("report.py: error: matplotlib is needed for the plots (pip install matplotlib), "
                  "or pass --no-plots", file=sys.stderr)
            return 2
    command = "python3 scripts/report.py " + shlex.join(argv)
    text = render(run, results_dir, command, plotter)
    (results_dir / "REPORT.md").write_text(text)
    if plotter:
        for stale in set(p.name for p in plotter.out_dir.glob("*.png")) - set(plotter.written):
            (plotter.out_dir / stale).unlink()
    print(f"wrote {results_dir / 'REPORT.md'} and {len(plotter.written) if plotter else 0} plots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
