"""The split-count sweep: a split-KV variant run with each split count forced (cases <variant>_s<N>,
kept out of the main tables), against the split count its own heuristic picks."""
from __future__ import annotations

from dataclasses import dataclass

from .common import FORCED_SPLITS, fmt, forced_splits, not_ok, shape_key, slug, time_text, title, usable


@dataclass
class SplitSweep:
    """One shape of a split-count sweep: the variant run with each forced split count, and the
    variant itself (its heuristic's choice, in its `splits` counter)."""
    shape_label: str
    forced: dict              # split count -> case
    heuristic: object = None  # the variant's case at this shape and mode, or None

    def best(self):
        """(split count, case) of the fastest good forced case, or (None, None)."""
        ok = [(c.median_us, n, c) for n, c in self.forced.items() if usable(c)]
        return min(ok, key=lambda t: t[:2])[1:] if ok else (None, None)

    def heuristic_splits(self) -> int | None:
        h = self.heuristic
        return int(h.counters["splits"]) if h is not None and h.ok and "splits" in h.counters else None


def split_sweeps(cases) -> dict:
    """(variant, workload, dtype, mode) -> [SplitSweep], one per shape in shape order."""
    by_name = {c.name: c for c in cases}
    sweeps = {}
    for c in cases:
        n = forced_splits(c)
        if n is None:
            continue
        variant = FORCED_SPLITS.fullmatch(c.impl)["variant"]
        shapes = sweeps.setdefault((variant, c.workload, c.dtype, c.mode), {})
        heuristic = by_name.get(c.name.replace(f"/{c.impl}/", f"/{variant}/", 1))
        shapes.setdefault(c.shape_label, SplitSweep(c.shape_label, {}, heuristic)).forced[n] = c
    return {k: [v[label] for label in sorted(v, key=lambda l: shape_key(next(iter(v[l].forced.values()))))]
            for k, v in sweeps.items()}


def split_table(sweeps: list) -> list:
    counts = sorted({n for s in sweeps for n in s.forced})
    out = ["| shape | " + " | ".join(f"N = {n}" for n in counts) +
           " | best N | heuristic N (time) | heuristic / best |",
           "|---|" + "---:|" * (len(counts) + 3)]
    for s in sweeps:
        best_n, best = s.best()
        cells = [not_ok(s.forced.get(n)) or
                 f"{time_text(s.forced[n], n == best_n)}<br>{fmt(s.forced[n].counters.get('GB/s', 0), 'GB/s')}"
                 for n in counts]
        h, hn = s.heuristic, s.heuristic_splits()
        chosen = f"{hn} ({fmt(h.median_us, 'µs')})" if hn is not None else "–"
        ratio = f"{h.median_us / best.median_us:.2f}×" if hn is not None and best else "–"
        out.append(f"| `{s.shape_label}` | " + " | ".join(cells) +
                   f" | {best_n if best else '–'} | {chosen} | {ratio} |")
    return out


def split_sweep_section(sweeps: dict, plotter, plots_dir: str) -> list:
    """The section for the sweeps given (split_sweeps' output, or a part of it); plots linked under plots_dir."""
    if not sweeps:
        return []
    md = ["## Split-count sweep", "",
          "The split-KV variant run with each split count N forced (cases `<variant>_s<N>`, left "
          "out of the tables and plots above): median time and K+V GB/s per N, the fastest in "
          "bold; the heuristic's N is the variant's own case at that shape (its `splits` counter), "
          "and heuristic / best is its time over the fastest forced time.", ""]
    for key, shape_sweeps in sweeps.items():
        md += [f"### `{key[0]}` · {title(key[1:])}", "", *split_table(shape_sweeps), ""]
        if plotter:
            name = plotter.split_sweep(shape_sweeps, f"splits_{slug(key)}.png",
                                       f"{' '.join(filter(None, key))}: time vs split count")
            md += [f"![{name}]({plots_dir}/{name})", ""]
    return md
