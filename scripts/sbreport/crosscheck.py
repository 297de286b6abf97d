"""The cross-check: each cold PyTorch baseline of the run timed again with triton's do_bench
(RESULTS_DIR/crosscheck.json, written by scripts/crosscheck_torch.py), the two times side by side."""
from __future__ import annotations

import math
from pathlib import Path

import sbresults

from .anchors import anchor_text
from .common import ReportError, digits, fmt, read_json

CROSSCHECK_FILE = "crosscheck.json"
CROSSCHECK_KEYS = ("case", "harness_us", "do_bench_us", "ratio", "ok")
TOLERANCE_KEY = {"attention": "attention_tolerance"}  # other ops: "tolerance"


def load_crosscheck(path: Path) -> dict | None:
    """crosscheck_torch.py's output, None when absent."""
    if not path.is_file():
        return None
    doc = read_json(path)
    rows = doc.get("rows")
    if not isinstance(rows, list) or "tolerance" not in doc:
        raise ReportError(f"{path}: no 'rows' list or 'tolerance'; not crosscheck_torch.py output")
    for i, row in enumerate(rows):
        missing = [k for k in CROSSCHECK_KEYS if not isinstance(row, dict) or k not in row]
        if missing:
            raise ReportError(f"{path}: rows[{i}]: missing {', '.join(missing)}")
    return doc


def _do_bench_cell(row: dict) -> str:
    spread = (f" ({row['do_bench_min_us']:,.{digits(row['do_bench_min_us'])}f}–"
              f"{row['do_bench_max_us']:,.{digits(row['do_bench_max_us'])}f})"
              if "do_bench_min_us" in row and "do_bench_max_us" in row else "")
    return fmt(row["do_bench_us"], "µs") + spread + (f" {row['compared']}" if row.get("compared") else "")


def _clock_cell(row: dict) -> str:
    h, d = row.get("harness_sm_mhz"), row.get("do_bench_sm_mhz")
    return f"{h:,.0f} / {d:,.0f}" if h and d else "–"


def _us_mhz_cell(key: str):
    """A time and the SM clock after it: row[key] in µs, row[key with _us -> _sm_mhz] in MHz."""
    def cell(row: dict) -> str:
        us, mhz = row.get(key), row.get(key[:-3] + "_sm_mhz")
        return (fmt(us, "µs") + (f" ({mhz:,.0f})" if mhz else "")) if us else "–"
    return cell


def _us_cell(key: str):
    return lambda row: fmt(row[key], "µs") if row.get(key) else "–"


# Columns a cross-check may carry: (the row key that brings the column, its header, its cell). Each
# appears only when some row has its key.
OPTIONAL_CROSSCHECK_COLUMNS = (
    ("do_bench_plain_us", "plain do_bench", _us_cell("do_bench_plain_us")),
    ("do_bench_held_us", "held do_bench", _us_cell("do_bench_held_us")),
    ("do_bench_l2_flush_us", "held do_bench, L2-sized flush (SM MHz after)", _us_mhz_cell("do_bench_l2_flush_us")),
    ("harness_protocol_py_us", "the harness's protocol from Python (SM MHz after)",
     _us_mhz_cell("harness_protocol_py_us")),
    ("do_bench_sm_mhz", "SM MHz after (harness / do_bench)", _clock_cell),
    ("harness_hold_mhz", "SM MHz during the harness's timed loop (hold_mhz)",
     lambda row: f"{row['harness_hold_mhz']:,.0f}" if row.get("harness_hold_mhz") else "–"),
    ("kernels", "kernels a call launches", lambda row: str(len(row["kernels"])) if row.get("kernels") else "–"),
    ("profiled_kernel_us", "their GPU span after do_bench's flush (profiler)", _us_cell("profiled_kernel_us")),
)


def _compare_rule(rows: list) -> tuple[str, str]:
    """How the file's rows chose the compared do_bench figure: (the column header's words, the section's)."""
    if any("host_us" in r for r in rows):
        return ("plain or held by the rule above, ",
                "do_bench ran plain and held (the harness's hold added after do_bench's flush: a GPU spin of "
                "twice the call's host time before its start event) and the compared figure is plain where the "
                "call's host time is under its GPU time, else the lower median, since each errs only upward "
                "there: plain by timing the host where a call's host side outlasts the flush, held by its hold. ")
    if any(r.get("compared") for r in rows):
        return ("lower of plain and held, ",
                "do_bench ran plain and held (the harness's hold added after do_bench's flush: a GPU spin of "
                "twice the call's host time before its start event) and the compared figure is the lower "
                "median, since each errs only upward: plain by timing the host where a call's host side "
                "outlasts the flush, held by its hold. ")
    if any("do_bench_plain_us" in r for r in rows):
        return ("after the hold, ",
                "The compared do_bench figure had the harness's hold added after do_bench's flush (a GPU spin "
                "of twice the call's host time before its start event), so that neither tool times a GPU "
                "waiting for the host; plain do_bench is beside it. ")
    return "", ""


def crosscheck_table(rows: list, tolerance: float, run: sbresults.Run, anchors: dict) -> list:
    columns = [(head, cell) for key, head, cell in OPTIONAL_CROSSCHECK_COLUMNS
               if any(r.get(key) is not None for r in rows)]
    held = _compare_rule(rows)[0]
    head = (f"| case | harness cold | do_bench {held}median (min–max of its calls) | ratio | within ±{tolerance:.0%} |"
            + "".join(f" {h} |" for h, _ in columns))
    rule = "|---|---:|---:|---:|:---:|" + "---:|" * len(columns)
    out = [head + " ANCHORS.md |", rule + "---:|"]
    by_name = run.by_name()
    for row in rows:
        case, f = by_name.get(row["case"]), sbresults.parse_name(row["case"])
        figures = anchors.get((f["op"], f["dtype"], f["shape_label"], f["mode"]), {}).get(f["impl"])
        extra = "".join(f" {cell(row)} |" for _, cell in columns)
        out.append(f"| `{'/'.join(row['case'].split('/')[1:-1])}` | {fmt(row['harness_us'], 'µs')} | "
                   f"{_do_bench_cell(row)} | {row['ratio']:.3f} | "
                   f"{'yes' if row['ok'] else '**no**'} |{extra} "
                   f"{anchor_text(figures, case) if figures else '–'} |")
    return out


def stale_rows(xc: dict, run: sbresults.Run) -> list:
    """The cases of rows that this run does not have, or has with another harness time."""
    by_name = run.by_name()
    return [r["case"] for r in xc["rows"] if r["case"] not in by_name or by_name[r["case"]].median_us is None
            or not math.isclose(by_name[r["case"]].median_us, r["harness_us"], rel_tol=1e-6)]


def crosscheck_summary(xc: dict) -> str:
    rows = xc["rows"]
    return (f"{sum(r['ok'] for r in rows)} of {len(rows)} PyTorch baselines timed again with triton's do_bench "
            "agree with the harness within tolerance")


def crosscheck_section(xc: dict, run: sbresults.Run, anchors: dict) -> list:
    rows, stale = xc["rows"], stale_rows(xc, run)
    md = ["## Cross-check: harness against triton's do_bench", "",
          f"`scripts/crosscheck_torch.py` timed each cold PyTorch baseline of the run again with "
          f"`triton.testing.do_bench` (its own events and L2 flush; median of its calls) on "
          f"{xc.get('gpu_name', 'the same GPU')}, PyTorch {xc.get('torch_version', '?')}, triton "
          f"{xc.get('triton_version', '?')}. ratio = harness / do_bench. " + _compare_rule(rows)[1] +
          f"{sum(r['ok'] for r in rows)} of {len(rows)} within tolerance. The ANCHORS.md column is "
          "the figure ANCHORS.md gives for the same baseline, measured with the same tool, as a time for this "
          "problem.", ""]
    if stale:
        md += [f"**Warning:** {len(stale)} of {len(rows)} rows do not match this run's cases "
               f"(absent, or another harness time; first: `{stale[0]}`): the cross-check comes "
               "from another run.", ""]
    by_op = {}
    for row in rows:
        by_op.setdefault(row["case"].split("/")[0], []).append(row)
    for op, op_rows in by_op.items():
        tolerance = xc.get(TOLERANCE_KEY.get(op, "tolerance"), xc["tolerance"])
        md += [f"### {op}", "", *crosscheck_table(op_rows, tolerance, run, anchors), ""]
    return md
