"""ANCHORS.md figures: RMSNorm and attention baselines measured by triton's do_bench, keyed as solbench
cases in RESULTS_DIR/anchors.json, shown beside this run's cells as targets measured by another tool."""
from __future__ import annotations

from pathlib import Path

from .common import ReportError, fmt, read_json

ANCHORS_FILE = "anchors.json"
AMOUNT_OF = {"GB/s": ("bytes", 1e3), "TFLOP/s": ("flops", 1e6)}  # counter, its unit per µs
ANCHOR_KEYS = ("op", "impl", "dtype", "shape", "mode", "value", "unit")


def load_anchors(path: Path) -> dict:
    """RESULTS_DIR/anchors.json as (op, dtype, shape label, mode) -> {impl: [figures]}; {} when
    the file is absent."""
    if not path.is_file():
        return {}
    anchors = {}
    for i, a in enumerate(read_json(path).get("anchors", [])):
        missing = [k for k in ANCHOR_KEYS if k not in a]
        if missing or a["unit"] not in ("µs", *AMOUNT_OF):
            raise ReportError(f"{path}: anchors[{i}]: missing {missing} or unknown unit "
                              f"{a.get('unit')!r} (µs, GB/s, TFLOP/s)")
        key = (a["op"], a["dtype"], a["shape"], a["mode"])
        anchors.setdefault(key, {}).setdefault(a["impl"], []).append(a)
    return anchors


def anchor_us(figure: dict, case) -> float | None:
    """An ANCHORS.md figure as a time for `case`'s problem (its bytes or flops counter)."""
    if figure["unit"] == "µs":
        return figure["value"]
    counter, per_us = AMOUNT_OF[figure["unit"]]
    amount = case.counters.get(counter) if case is not None else None
    return amount / (figure["value"] * per_us) if amount else None


def anchor_text(figures: list, case=None) -> str:
    """The figures as ANCHORS.md gives them; with a case and no time among them, the time too."""
    text = " · ".join(fmt(f["value"], f["unit"]) for f in figures)
    times = [anchor_us(f, case) for f in figures] if case is not None else []
    if times and None not in times and all(f["unit"] != "µs" for f in figures):
        text += f" ≈ {fmt(times[0], 'µs')}"
    return text
