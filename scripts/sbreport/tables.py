"""The per-shape results tables, the summary (one row per op, workload, dtype and mode) and the
per-implementation tables (every kernel against the fastest PyTorch baseline, the speed of light and the
same-bytes reference)."""
from __future__ import annotations

import statistics

from .anchors import anchor_text
from .common import (BYTES_REFERENCES, IMPLAUSIBLE_SOL_PCT, TIME_ONLY_REFERENCES, fmt, group_cases, implausible,
                     impl_order, is_ours, not_ok, pct, shape_key, time_text, title, usable)


def cell(case, metric: str, best_torch_us: float | None, fastest: bool, ref=None) -> str:
    """One implementation at one shape: time, rate, % SoL, share of the bytes reference `ref` (the row's
    BYTES_REFERENCES case, if any), speedup over the best PyTorch baseline, error, split count."""
    if not_ok(case):
        return not_ok(case)
    lines = [time_text(case, fastest)]
    rate = [fmt(case.counters[metric], metric)] if metric in case.counters else []
    if case.impl in TIME_ONLY_REFERENCES:
        rate = []
    if "sol_pct" in case.counters and case.impl not in TIME_ONLY_REFERENCES:
        rate.append(f"{pct(case.counters['sol_pct'])} SoL")
    if ref is not None and not case.is_reference and "GB/s" in case.counters and ref.counters.get("GB/s"):
        rate.append(f"{case.counters['GB/s'] / ref.counters['GB/s']:.0%} of {BYTES_REFERENCES[ref.impl]}")
    lines.append(" · ".join(rate))
    tail = [f"{best_torch_us / case.median_us:.2f}×"] if best_torch_us and not case.is_reference else []
    if "err" in case.counters:
        tail.append(f"err {case.counters['err']:.2g}")
    if "splits" in case.counters:
        tail.append(f"{case.counters['splits']:.0f} splits")
    lines.append(" · ".join(tail))
    if implausible(case):
        lines.append(f"⚠ implausible (> {IMPLAUSIBLE_SOL_PCT:,}% SoL): not compared or plotted")
    return "<br>".join(line for line in lines if line)


def shape_rows(cases) -> dict:
    """A table's rows: shape label -> {impl: case}, the shapes in shape_key order."""
    rows = {}
    for c in sorted(cases, key=shape_key):
        rows.setdefault(c.shape_label, {})[c.impl] = c
    return rows


def best_torch_and_ref(ok) -> tuple:
    """Of a row's usable cases: the fastest PyTorch baseline and the bytes reference (BYTES_REFERENCES),
    each None where the row has none."""
    return (min((c for c in ok if c.is_torch), key=lambda c: c.median_us, default=None),
            next((c for c in ok if c.impl in BYTES_REFERENCES), None))


def table(cases, metric: str, anchors: dict) -> list:
    """A row per shape, a cell per impl; a cell whose case ANCHORS.md measured shows that figure,
    and a last column holds the ANCHORS.md figures of impls this run does not have."""
    impls = impl_order(cases)
    op, dtype, mode = cases[0].op, cases[0].dtype, cases[0].mode
    shapes = shape_rows(cases)
    others = {label: {i: a for i, a in anchors.get((op, dtype, label, mode), {}).items()
                      if i not in impls} for label in shapes}
    extra = ["ANCHORS.md, not run here"] if any(others.values()) else []
    out = ["| shape | " + " | ".join([f"`{i}`" for i in impls] + extra) + " |",
           "|---|" + "---:|" * (len(impls) + len(extra))]
    for label, by_impl in shapes.items():
        ok = [c for c in by_impl.values() if usable(c)]
        best_torch, ref = best_torch_and_ref(ok)
        best_us = best_torch.median_us if best_torch else None
        fastest = min((c for c in ok if not c.is_reference), key=lambda c: c.median_us, default=None)
        measured = anchors.get((op, dtype, label, mode), {})
        cells = ["<br>".join(filter(None, [
                     cell(by_impl.get(i), metric, best_us, by_impl.get(i) is fastest, ref),
                     f"ANCHORS: {anchor_text(measured[i])}" if i in measured else ""]))
                 for i in impls]
        cells += ["<br>".join(f"`{i}` {anchor_text(a)}" for i, a in others[label].items()) or "–"
                  for _ in extra]
        out.append(f"| `{label}` | " + " | ".join(cells) + " |")
    return out


def _spread(values: list, form) -> str:
    """'median (lowest – highest)' of values, each written by form; '–' for none."""
    if not values:
        return "–"
    mid = form(statistics.median(values))
    return mid if len(values) == 1 else f"{mid} ({form(min(values))} – {form(max(values))})"


def _times(x: float) -> str:
    return f"{x:.2f}×"


def _share(x: float) -> str:
    return f"{x:.0%}"


def _most(counts: dict) -> str:
    """The name counted most (ties: alphabetical), with its count."""
    name, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return f"`{name}` ({n})"


def summary_stats(group) -> dict | None:
    """At each shape of one table, our fastest kernel against the fastest PyTorch baseline: which kernels
    win, the speedups, our % SoL and our GB/s as a share of the bytes reference's. None where no shape has
    both sides."""
    st = {"speedup": [], "sol": [], "share": [], "ours": {}, "torch": {}}
    for by_impl in shape_rows(group).values():
        ok = [c for c in by_impl.values() if usable(c)]
        ours = min((c for c in ok if is_ours(c)), key=lambda c: c.median_us, default=None)
        torch, ref = best_torch_and_ref(ok)
        if ours is None or torch is None:
            continue
        st["ours"][ours.impl] = st["ours"].get(ours.impl, 0) + 1
        st["torch"][torch.impl] = st["torch"].get(torch.impl, 0) + 1
        st["speedup"].append(torch.median_us / ours.median_us)
        if "sol_pct" in ours.counters:
            st["sol"].append(ours.counters["sol_pct"])
        if ref is not None and ours.counters.get("GB/s") and ref.counters.get("GB/s"):
            st["share"].append(ours.counters["GB/s"] / ref.counters["GB/s"])
    return st if st["speedup"] else None


# (header, alignment, cell of (group key, summary_stats)): the summary's columns; README_COLUMNS, the
# README's shorter table, names those it keeps.
SUMMARY_COLUMNS = [
    ("op", "---", lambda k, st: k[0]),
    ("workload", "---", lambda k, st: k[1] or "–"),
    ("dtype", "---", lambda k, st: k[2]),
    ("mode", "---", lambda k, st: k[3]),
    ("shapes", "---:", lambda k, st: str(len(st["speedup"]))),
    ("our fastest kernel (shapes)", "---", lambda k, st: _most(st["ours"])),
    ("fastest PyTorch (shapes)", "---", lambda k, st: _most(st["torch"])),
    ("ours at least as fast", "---:", lambda k, st: str(sum(s >= 1.0 for s in st["speedup"]))),
    ("speedup over PyTorch: median (range)", "---", lambda k, st: _spread(st["speedup"], _times)),
    ("ours, % of speed of light", "---", lambda k, st: _spread(st["sol"], pct)),
    ("ours, share of the same-bytes reference", "---", lambda k, st: _spread(st["share"], _share)),
]
README_COLUMNS = ("op", "workload", "dtype", "our fastest kernel (shapes)", "fastest PyTorch (shapes)",
                  "speedup over PyTorch: median (range)", "ours, % of speed of light",
                  "ours, share of the same-bytes reference")


def summary_table(cases, keep=None, mode=None) -> list:
    """A row per results table that has a PyTorch baseline (columns: SUMMARY_COLUMNS, or those named in
    `keep`; tables of every mode, or of `mode` alone); [] when none has."""
    columns = [c for c in SUMMARY_COLUMNS if keep is None or c[0] in keep]
    rows = [(key, st) for key, group in group_cases(cases).items()
            if (mode is None or key[3] == mode) and (st := summary_stats(group))]
    if not rows:
        return []
    return ["| " + " | ".join(h for h, _, _ in columns) + " |", "|" + "|".join(a for _, a, _ in columns) + "|",
            *["| " + " | ".join(f(key, st) for _, _, f in columns) + " |" for key, st in rows]]


def impl_rows(group) -> list:
    """One line per implementation of a table: shapes it ran, its speedup over the fastest PyTorch baseline,
    its % SoL and its share of the same-bytes reference, each as median (range) over the shapes."""
    stats = {i: {"ok": 0, "skipped": 0, "failed": 0, "speedup": [], "sol": [], "share": []}
             for i in impl_order(group)}
    for by_impl in shape_rows(group).values():
        torch, ref = best_torch_and_ref([c for c in by_impl.values() if usable(c)])
        for impl, c in by_impl.items():
            s = stats[impl]
            s["skipped" if c.skipped else "failed" if c.failed else "ok"] += 1
            if not usable(c):
                continue
            if torch is not None and not c.is_reference:
                s["speedup"].append(torch.median_us / c.median_us)
            if "sol_pct" in c.counters and c.impl not in TIME_ONLY_REFERENCES:
                s["sol"].append(c.counters["sol_pct"])
            if ref is not None and not c.is_reference and c.counters.get("GB/s") and ref.counters.get("GB/s"):
                s["share"].append(c.counters["GB/s"] / ref.counters["GB/s"])
    out = []
    for impl, s in stats.items():
        ran = f"{s['ok']}" + "".join(f", {s[k]} {k}" for k in ("skipped", "failed") if s[k])
        out.append(f"| `{impl}` | {ran} | {_spread(s['speedup'], _times)} | {_spread(s['sol'], pct)} | "
                   f"{_spread(s['share'], _share)} |")
    return out


def impl_table(key, group) -> list:
    return [f"**{title(key)}**", "",
            "| implementation | shapes | speedup over the fastest PyTorch | % of speed of light | "
            "share of the same-bytes reference |",
            "|---|---|---|---|---|", *impl_rows(group), ""]
