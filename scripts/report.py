#!/usr/bin/env python3
"""Write RESULTS_DIR/REPORT.md and RESULTS_DIR/plots/*.png from a solbench run.

The run is RESULTS_DIR/latest.json unless --run names the file(s) or directory of one run. The
report holds the environment table, the command that reproduces the run, one table per op,
workload, dtype and mode (a row per shape, a cell per implementation: median time, GB/s or
TFLOP/s, % of speed of light, speedup over the best PyTorch baseline at that shape, verification
error, and the ANCHORS.md figure where RESULTS_DIR/anchors.json has one for the case), the plots,
the split-count sweep of a split-KV variant (cases named <variant>_s<N>, kept out of the main
tables), the cross-check of the PyTorch baselines against triton's do_bench
(RESULTS_DIR/crosscheck_latest.json, written by scripts/crosscheck_torch.py) when present, the attention's
window inside each decode layer (RESULTS_DIR/layer_timeline_latest.json, scripts/layer_timeline.py) when
present, and
RESULTS_DIR/NOTES.md (hand-written) verbatim. Both REPORT.md and plots/ are generated: PNGs in plots/
that this run did not produce are removed.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import shlex
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sbresults  # noqa: E402

MODE_ORDER = ("cold", "hot")
CEILING_OF = {"GB/s": "copy_gbps", "TFLOP/s": "gemm_tflops"}
CEILING_NAME = {"copy_gbps": "copy", "gemm_tflops": "GEMM"}
SLUG = {"GB/s": "gbps", "TFLOP/s": "tflops"}
TOKEN_OF = {name: token for token, name in sbresults.SHAPE_TOKENS.items()}

METRIC_LABEL = {"GB/s": "bandwidth (GB/s)", "TFLOP/s": "throughput (TFLOP/s)"}
AMOUNT_OF = {"GB/s": ("bytes", 1e3), "TFLOP/s": ("flops", 1e6)}  # counter, its unit per µs
# A forced split count of a split-KV variant: decode_splitk_s8 is decode_splitk with 8 splits.
FORCED_SPLITS = re.compile(r"(?P<variant>.+)_s(?P<splits>\d+)")
# Past 10x the speed of light a figure is a broken measurement (e.g. a CUDA graph that captured
# nothing), not a fast kernel: shown flagged, left out of comparisons and plots.
IMPLAUSIBLE_SOL_PCT = 1000
ANCHORS_FILE = "anchors.json"
CROSSCHECK_FILE = "crosscheck_latest.json"
TIMELINE_FILE = "layer_timeline_latest.json"
# A layer timeline whose median replay has a gap this long waited for the host (the suite's replays show 1-2.5 µs;
# session 66's c322, with a sampler thread contending for the GIL, 20-86 µs).
HOST_GAP_US = 5.0
CROSSCHECK_KEYS = ("case", "harness_us", "do_bench_us", "ratio", "ok")
TOLERANCE_KEY = {"attention": "attention_tolerance"}  # other ops: "tolerance"


class ReportError(ValueError):
    """A malformed input file next to the run (anchors, cross-check); the message names it."""


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

ENV_ROWS = [  # (label, context key, unit)
    ("GPU", "gpu_name", ""), ("GPU UUID (the physical GPU)", "gpu_uuid", ""), ("SMs", "sm_count", ""),
    ("L2", "l2_bytes", "MiB"),
    ("SM clock", "sm_clock_mhz", "MHz"), ("memory clock", "mem_clock_mhz", "MHz"),
    ("NVIDIA driver", "nvidia_driver", ""), ("CUDA version of the driver", "driver", ""),
    ("CUDA runtime", "cuda_runtime", ""),
    ("PyTorch", "torch_version", ""), ("git commit", "git_commit", ""),
    ("kernels fingerprint", "kernels_fingerprint", ""), ("build type", "build_type", ""),
    ("timing protocol (a change moves times without a change of kernels)", "timing_protocol", ""),
    ("Google Benchmark library", "library_build_type", ""),
    ("copy ceiling (measured, read + write)", "copy_gbps", "GB/s"),
    ("GEMM ceiling (measured, cuBLAS bf16)", "gemm_tflops", "TFLOP/s"),
    ("date", "date", ""), ("host", "host_name", ""),
]


def forced_splits(case) -> int | None:
    """The split count a sweep case forces (decode_splitk_s8: 8), None for any other case."""
    m = FORCED_SPLITS.fullmatch(case.impl)
    return int(m["splits"]) if m else None


def implausible(case) -> bool:
    return case.counters.get("sol_pct", 0) > IMPLAUSIBLE_SOL_PCT


def usable(case) -> bool:
    """A good case with a believable figure: the ones compared and plotted."""
    return case.ok and not implausible(case)


def in_main_tables(case) -> bool:
    return case.op != "floor" and forced_splits(case) is None


def headline_metric(op: str, workload: str) -> str:
    return "TFLOP/s" if op in ("attention", "e2e") and workload == "prefill" else "GB/s"


def impl_order(cases) -> list:
    """Our variants in order of first appearance, then the PyTorch baselines, then the references."""
    impls = list(dict.fromkeys(c.impl for c in cases))
    kind = [sbresults.TORCH_PREFIX, sbresults.REF_PREFIX]
    return [i for i in impls if not i.startswith(tuple(kind))] + \
           [i for i in impls if i.startswith(sbresults.TORCH_PREFIX)] + \
           [i for i in impls if i.startswith(sbresults.REF_PREFIX)]


def shape_key(case) -> tuple:
    return tuple(case.shape.get(f, -1) for f in sbresults.SHAPE_FIELDS) + (case.shape_label,)


def group_cases(cases) -> dict:
    """(op, workload, dtype, mode) -> cases: ops and workloads in order of first appearance,
    then cold before hot."""
    groups = {}
    for c in cases:
        if in_main_tables(c):
            groups.setdefault((c.op, c.workload, c.dtype, c.mode), []).append(c)
    first = {k: i for i, k in enumerate(groups)}
    ops_workloads = list(dict.fromkeys(k[:2] for k in groups))
    mode_rank = {m: i for i, m in enumerate(MODE_ORDER)}
    return dict(sorted(groups.items(), key=lambda kv: (
        ops_workloads.index(kv[0][:2]), mode_rank.get(kv[0][3], len(MODE_ORDER)), first[kv[0]])))


def _digits(x: float) -> int:
    return 0 if abs(x) >= 100 else 1 if abs(x) >= 10 else 2


def _fmt(x: float, unit: str) -> str:
    return f"{x:,.{_digits(x)}f} {unit}".rstrip()


def _short(message: str, limit: int = 70) -> str:
    message = message.replace("|", "\\|").replace("\n", " ")
    return message if len(message) <= limit else message[:limit - 1] + "…"


def _not_ok(case) -> str:
    """The cell of a missing, skipped or failed case; "" for a good one."""
    if case is None:
        return "–"
    if case.skipped:
        return f"skipped: {_short(case.error.removeprefix(sbresults.SKIP_PREFIX).strip())}"
    return "" if case.ok else f"**FAILED**: {_short(case.error)}"


def _time(case, bold: bool) -> str:
    time = _fmt(case.median_us, "µs")
    return f"**{time}**" if bold else time


# The references a row's cells are set against, with the word a cell uses: ref_copy, a copy of an RMSNorm
# case's bytes; ref_kv_read, a read of a decode case's K and V by a kernel that computes nothing.
BYTES_REFERENCES = {"ref_copy": "copy", "ref_kv_read": "read"}
# References that are a time and nothing else: ref_rest_of_layer (bench_e2e) is there to be subtracted
# from a layer's time, and its rate is no figure of merit (runs up to 36311ce's also gave it the whole
# layer's bytes, which it does not move). Its cells show the time and the check; it is left out of the plots.
TIME_ONLY_REFERENCES = ("ref_rest_of_layer",)


def cell(case, metric: str, best_torch_us: float | None, fastest: bool, ref=None) -> str:
    """ref: the row's case of a BYTES_REFERENCES impl, if any: a non-reference cell then also gives its
    GB/s as a fraction of the reference's (the same bytes moved under the same protocol)."""
    if _not_ok(case):
        return _not_ok(case)
    lines = [_time(case, fastest)]
    rate = [_fmt(case.counters[metric], metric)] if metric in case.counters else []
    if case.impl in TIME_ONLY_REFERENCES:
        rate = []
    if "sol_pct" in case.counters and case.impl not in TIME_ONLY_REFERENCES:
        sol = case.counters["sol_pct"]
        rate.append(f"{sol:.{0 if sol >= 10 else 1}f}% SoL")
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
    """Of a row's usable cases: the fastest PyTorch baseline's time and the bytes reference (BYTES_REFERENCES),
    each None where the row has none."""
    return (min((c.median_us for c in ok if c.is_torch), default=None),
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
        fastest = min((c for c in ok if not c.is_reference), key=lambda c: c.median_us, default=None)
        measured = anchors.get((op, dtype, label, mode), {})
        cells = ["<br>".join(filter(None, [
                     cell(by_impl.get(i), metric, best_torch, by_impl.get(i) is fastest, ref),
                     f"ANCHORS: {anchor_text(measured[i])}" if i in measured else ""]))
                 for i in impls]
        cells += ["<br>".join(f"`{i}` {anchor_text(a)}" for i, a in others[label].items()) or "–"
                  for _ in extra]
        out.append(f"| `{label}` | " + " | ".join(cells) + " |")
    return out


def summary_section(cases) -> list:
    """A line per results table: the shapes where this suite's fastest variant is at least as fast as the
    best PyTorch baseline, the range of that speedup, and of the fastest variant's GB/s as a share of the
    bytes reference's (`ref_copy`, `ref_kv_read`) where the table has one. Tables without a PyTorch baseline
    are left out."""
    rows = []
    for key, group in group_cases(cases).items():
        speedups, shares, fastest = [], [], {}
        for by_impl in shape_rows(group).values():
            ok = [c for c in by_impl.values() if usable(c)]
            ours = min((c for c in ok if not c.is_torch and not c.is_reference), key=lambda c: c.median_us,
                       default=None)
            torch, ref = best_torch_and_ref(ok)
            if ours is None or torch is None:
                continue
            fastest[ours.impl] = fastest.get(ours.impl, 0) + 1
            speedups.append(torch / ours.median_us)
            if ref is not None and ours.counters.get("GB/s") and ref.counters.get("GB/s"):
                shares.append(ours.counters["GB/s"] / ref.counters["GB/s"])
        if not speedups:
            continue
        at_least = sum(s >= 1.0 for s in speedups)
        mid = statistics.median(speedups)
        share = f"{min(shares):.0%} – {max(shares):.0%}" if shares else "–"
        winners = ", ".join(f"`{i}` {n}" for i, n in sorted(fastest.items(), key=lambda kv: (-kv[1], kv[0])))
        rows.append(f"| {' · '.join(p for p in key if p)} | {len(speedups)} | {winners} | "
                    f"{at_least} of {len(speedups)} | {min(speedups):.3f}× · {mid:.3f}× · {max(speedups):.3f}× | "
                    f"{share} |")
    if not rows:
        return []
    return ["## Summary", "",
            "Per results table below: at each shape, this suite's fastest variant against the fastest PyTorch "
            "baseline of the same run (their time ratio, > 1 where ours is faster), and its GB/s as a share of "
            "the bytes reference's, a kernel that only moves the same bytes (`ref_copy`, `ref_kv_read`), "
            "where the table has one. Shapes where either side failed or was skipped are left out.", "",
            "| table | shapes | our fastest variant (shapes) | ours at least as fast | speedup over PyTorch: "
            "lowest · median · highest | share of the bytes reference |",
            "|---|---:|---|---:|---|---|", *rows, ""]


# ---------------------------------------------------------------- ANCHORS.md figures

def load_anchors(path: Path) -> dict:
    """RESULTS_DIR/anchors.json as (op, dtype, shape label, mode) -> {impl: [figures]}; {} when
    the file is absent."""
    if not path.is_file():
        return {}
    anchors = {}
    for i, a in enumerate(_json(path).get("anchors", [])):
        missing = [k for k in ("op", "impl", "dtype", "shape", "mode", "value", "unit") if k not in a]
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
    text = " · ".join(_fmt(f["value"], f["unit"]) for f in figures)
    times = [anchor_us(f, case) for f in figures] if case is not None else []
    if times and None not in times and all(f["unit"] != "µs" for f in figures):
        text += f" ≈ {_fmt(times[0], 'µs')}"
    return text


def _json(path: Path) -> dict:
    try:
        doc = json.loads(sbresults.read_text(path))
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(doc, dict):
        raise ReportError(f"{path}: not a JSON object")
    return doc


# ---------------------------------------------------------------- cross-check

def load_crosscheck(path: Path) -> dict | None:
    """crosscheck_torch.py's output, None when absent."""
    if not path.is_file():
        return None
    doc = _json(path)
    rows = doc.get("rows")
    if not isinstance(rows, list) or "tolerance" not in doc:
        raise ReportError(f"{path}: no 'rows' list or 'tolerance'; not crosscheck_torch.py output")
    for i, row in enumerate(rows):
        missing = [k for k in CROSSCHECK_KEYS if k not in row]
        if missing:
            raise ReportError(f"{path}: rows[{i}]: missing {', '.join(missing)}")
    return doc


def _do_bench_cell(row: dict) -> str:
    spread = (f" ({row['do_bench_min_us']:,.{_digits(row['do_bench_min_us'])}f}–"
              f"{row['do_bench_max_us']:,.{_digits(row['do_bench_max_us'])}f})"
              if "do_bench_min_us" in row and "do_bench_max_us" in row else "")
    return _fmt(row["do_bench_us"], "µs") + spread + (f" {row['compared']}" if row.get("compared") else "")


def _clock_cell(row: dict) -> str:
    h, d = row.get("harness_sm_mhz"), row.get("do_bench_sm_mhz")
    return f"{h:,.0f} / {d:,.0f}" if h and d else "–"


def _us_mhz_cell(key: str):
    """A time and the SM clock after it: row[key] in µs, row[key with _us -> _sm_mhz] in MHz."""
    def cell(row: dict) -> str:
        us, mhz = row.get(key), row.get(key[:-3] + "_sm_mhz")
        return (_fmt(us, "µs") + (f" ({mhz:,.0f})" if mhz else "")) if us else "–"
    return cell


def _us_cell(key: str):
    return lambda row: _fmt(row[key], "µs") if row.get(key) else "–"


# Columns that newer cross-checks carry (crosscheck_torch.py): (the row key that brings the column, its
# header, its cell). Each appears only when some row has its key, so older files render as before.
OPTIONAL_CROSSCHECK_COLUMNS = (
    ("do_bench_plain_us", "plain do_bench", _us_cell("do_bench_plain_us")),
    ("do_bench_held_us", "held do_bench", _us_cell("do_bench_held_us")),
    ("do_bench_l2_flush_us", "held do_bench, L2-sized flush (SM MHz after)", _us_mhz_cell("do_bench_l2_flush_us")),
    ("harness_protocol_py_us", "the harness's protocol from Python (SM MHz after)", _us_mhz_cell("harness_protocol_py_us")),
    ("do_bench_sm_mhz", "SM MHz after (harness / do_bench)", _clock_cell),
    ("harness_hold_mhz", "SM MHz during the harness's timed loop (hold_mhz)",
     lambda row: f"{row['harness_hold_mhz']:,.0f}" if row.get("harness_hold_mhz") else "–"),
    ("kernels", "kernels a call launches", lambda row: str(len(row["kernels"])) if row.get("kernels") else "–"),
    ("profiled_kernel_us", "their GPU span after do_bench's flush (profiler)", _us_cell("profiled_kernel_us")),
)


def crosscheck_table(rows: list, tolerance: float, run: sbresults.Run, anchors: dict) -> list:
    columns = [(title, cell) for key, title, cell in OPTIONAL_CROSSCHECK_COLUMNS
               if any(r.get(key) is not None for r in rows)]
    # The compared figure's rule, as the file's rows were compared (crosscheck_section words it in full).
    held = ("plain or held by the rule above, " if any("host_us" in r for r in rows)
            else "lower of plain and held, " if any(r.get("compared") for r in rows)
            else "after the hold, " if any("do_bench_plain_us" in r for r in rows) else "")
    head = (f"| case | harness cold | do_bench {held}median (min–max of its calls) | ratio | within ±{tolerance:.0%} |"
            + "".join(f" {title} |" for title, _ in columns))
    rule = "|---|---:|---:|---:|:---:|" + "---:|" * len(columns)
    out = [head + " ANCHORS.md |", rule + "---:|"]
    by_name = run.by_name()
    for row in rows:
        case, f = by_name.get(row["case"]), sbresults.parse_name(row["case"])
        figures = anchors.get((f["op"], f["dtype"], f["shape_label"], f["mode"]), {}).get(f["impl"])
        extra = "".join(f" {cell(row)} |" for _, cell in columns)
        out.append(f"| `{'/'.join(row['case'].split('/')[1:-1])}` | {_fmt(row['harness_us'], 'µs')} | "
                   f"{_do_bench_cell(row)} | {row['ratio']:.3f} | "
                   f"{'yes' if row['ok'] else '**no**'} |{extra} "
                   f"{anchor_text(figures, case) if figures else '–'} |")
    return out


def crosscheck_section(xc: dict, run: sbresults.Run, anchors: dict) -> list:
    rows, by_name = xc["rows"], run.by_name()
    stale = [r["case"] for r in rows if r["case"] not in by_name or by_name[r["case"]].median_us is
             None or not math.isclose(by_name[r["case"]].median_us, r["harness_us"], rel_tol=1e-6)]
    md = ["## Cross-check: harness against triton's do_bench", "",
          f"`scripts/crosscheck_torch.py` timed each cold PyTorch baseline of the run again with "
          f"`triton.testing.do_bench` (its own events and L2 flush; median of its calls) on "
          f"{xc.get('gpu_name', 'the same GPU')}, PyTorch {xc.get('torch_version', '?')}, triton "
          f"{xc.get('triton_version', '?')}. ratio = harness / do_bench. "
          + ("do_bench ran plain and held (the harness's hold added after do_bench's flush: a GPU spin "
             "of twice the call's host time before its start event) and the compared figure is plain "
             "where the call's host time is under its GPU time, else the lower median, since each errs "
             "only upward there: plain by timing the host where a call's host side outlasts the flush, "
             "held by its hold (the script's docstring gives the figures). "
             if any("host_us" in r for r in rows) else
             "do_bench ran plain and held (the harness's hold added after do_bench's flush: a GPU spin "
             "of twice the call's host time before its start event) and the compared figure is the "
             "lower median, since each errs only upward: plain by timing the host where a call's host "
             "side outlasts the flush, held by its hold (the script's docstring gives the figures). "
             if any(r.get("compared") for r in rows) else
             "The compared do_bench figure had the harness's hold added after do_bench's flush (a GPU "
             "spin of twice the call's host time before its start event), so that neither tool times "
             "a GPU waiting for the host; plain do_bench is beside it. "
             if any("do_bench_plain_us" in r for r in rows) else "") +
          f"{sum(r['ok'] for r in rows)} of {len(rows)} within tolerance. The ANCHORS.md column is "
          "the figure measured on 2026-11-29 with the same tool, as a time for this problem.", ""]
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


# ---------------------------------------------------------------- layer timeline

def load_timeline(path: Path) -> dict | None:
    """layer_timeline.py's output, None when absent; each shape needs its cold comparison of SDPA's and
    our attention against the layer without attention."""
    if not path.is_file():
        return None
    doc = _json(path)
    if not isinstance(doc.get("shapes"), dict) or not isinstance(doc.get("env"), dict):
        raise ReportError(f"{path}: no 'env' or 'shapes'; not layer_timeline.py output")
    for label, shape in doc["shapes"].items():
        try:
            cold = shape["modes"]["cold"]
            for attn in ("sdpa", "solbench"):
                for key in ("window_us", "suffix_busy_us", "attention_ops"):
                    cold["against_none"][attn][key]
                cold["timelines"][f"layer/{attn}"]["summary"]["span_us"]
            cold["timelines"]["layer/none"]["summary"]["span_us"]
        except (KeyError, TypeError) as e:
            raise ReportError(f"{path}: shape {label}: no cold comparison of sdpa and solbench ({e})") from None
    return doc


def timeline_section(tl: dict, run: sbresults.Run) -> list:
    env, ctx = tl["env"], run.context
    md = ["## Attention inside the decode layers: kernel timeline", "",
          "`scripts/layer_timeline.py` ran each bf16 decode layer of `bench_e2e` again in PyTorch, the same ops "
          "(`ref/torch/torch_layer.h`), with PyTorch's attention (SDPA's own choice of backend), ours "
          f"(`{env.get('variant', 'decode_splitk')}`, through `libsolbench_probe.so`) and none, each replay enqueued "
          "as the suite's cold launches are (L2-sized write, a spin of twice the layer's host time, the layer), "
          f"and recorded every GPU op with CUPTI (torch.profiler), {env.get('replays', '?')} replays, medians. "
          "The attention's window is the time from the end of the last op before it to the start of the first op "
          "after it (the ops are matched against the layer without attention), so it holds the attention's "
          "kernels and their launch gaps and nothing of the layer's other kernels; the layer's time also moves "
          "with what an attention does to the GEMMs after it (the last columns: their busy time), which the "
          "window leaves out. Ratios: PyTorch's time over ours (> 1: ours faster).", ""]
    run_gpu, tl_gpu = ctx.get("gpu_uuid"), env.get("gpu_uuid")
    run_commit, tl_commit = str(ctx.get("git_commit", ""))[:12], str(env.get("git_commit", ""))[:12]
    n = min(len(run_commit), len(tl_commit))  # a run may record a short hash
    if run_gpu and tl_gpu != run_gpu or n and run_commit[:n] != tl_commit[:n]:
        md += [f"**Warning:** the timeline was taken on {tl_gpu or 'an unrecorded GPU'} at commit "
               f"{tl_commit or '?'}, the run on {run_gpu or '?'} at {run_commit or '?'}: it comes from another run.", ""]
    starved = sorted({label for label, shape in tl["shapes"].items()
                      for v in shape["modes"]["cold"]["timelines"].values()
                      if v["summary"].get("max_gap_us", 0) > HOST_GAP_US})
    if starved:
        md += [f"**Warning:** in {len(starved)} layer(s) (first: `{starved[0]}`) the median replay has a gap of over "
               f"{HOST_GAP_US:g} µs between two ops: the GPU waited for the host, so those windows and spans hold "
               "host time.", ""]
    md += ["| layer | attention window: PyTorch's (its kernels) | ours | ratio | layer: PyTorch's attention | ours | "
           "no attention | ratio | after the attention, busy: PyTorch's | ours |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for label, shape in tl["shapes"].items():
        cold = shape["modes"]["cold"]
        a, spans = cold["against_none"], {k.split("/")[1]: v["summary"]["span_us"] for k, v in cold["timelines"].items()
                                          if k.startswith("layer/")}
        theirs, ours = a["sdpa"], a["solbench"]
        kernels = ", ".join(f"`{_short(o['name'], 40)}` {_fmt(o['dur_us'], 'µs')}" for o in theirs["attention_ops"])
        md.append(f"| `{label}` | {_fmt(theirs['window_us'], 'µs')} ({kernels}) | {_fmt(ours['window_us'], 'µs')} | "
                  f"**{theirs['window_us'] / ours['window_us']:.3f}×** | {_fmt(spans['sdpa'], 'µs')} | "
                  f"{_fmt(spans['solbench'], 'µs')} | {_fmt(spans['none'], 'µs')} | "
                  f"{spans['sdpa'] / spans['solbench']:.3f}× | {_fmt(theirs['suffix_busy_us'], 'µs')} | "
                  f"{_fmt(ours['suffix_busy_us'], 'µs')} |")
    return md + [""]


# ---------------------------------------------------------------- split-count sweep

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
        return int(h.counters["splits"]) if h is not None and h.ok and "splits" in h.counters \
            else None


def split_sweeps(cases) -> dict:
    """(variant, workload, dtype, mode) -> [SplitSweep], one per shape in order of appearance."""
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
    return {k: [v[label] for label in sorted(v, key=lambda l: shape_key(next(iter(
        v[l].forced.values()))))] for k, v in sweeps.items()}


def split_table(sweeps: list) -> list:
    counts = sorted({n for s in sweeps for n in s.forced})
    out = ["| shape | " + " | ".join(f"N = {n}" for n in counts) +
           " | best N | heuristic N (time) | heuristic / best |",
           "|---|" + "---:|" * (len(counts) + 3)]
    for s in sweeps:
        best_n, best = s.best()
        cells = [_not_ok(s.forced.get(n)) or
                 f"{_time(s.forced[n], n == best_n)}<br>{_fmt(s.forced[n].counters.get('GB/s', 0), 'GB/s')}"
                 for n in counts]
        h, hn = s.heuristic, s.heuristic_splits()
        chosen = f"{hn} ({_fmt(h.median_us, 'µs')})" if hn is not None else "–"
        ratio = f"{h.median_us / best.median_us:.2f}×" if hn is not None and best else "–"
        out.append(f"| `{s.shape_label}` | " + " | ".join(cells) +
                   f" | {best_n if best else '–'} | {chosen} | {ratio} |")
    return out


def split_sweep_section(cases, plotter) -> list:
    sweeps = split_sweeps(cases)
    if not sweeps:
        return []
    md = ["## Split-count sweep", "",
          "The split-KV variant run with each split count N forced (cases `<variant>_s<N>`, left "
          "out of the tables and plots above): median time and K+V GB/s per N, the fastest in "
          "bold; the heuristic's N is the variant's own case at that shape (its `splits` counter), "
          "and heuristic / best is its time over the fastest forced time.", ""]
    for key, shape_sweeps in sweeps.items():
        md += [f"### `{key[0]}` · {' · '.join(p for p in key[1:] if p)}", "",
               *split_table(shape_sweeps), ""]
        if plotter:
            name = plotter.split_sweep(shape_sweeps, "_".join(("splits", *filter(None, key))) +
                                       ".png", f"{' '.join(filter(None, key))}: time vs split count")
            md += [f"![{name}](plots/{name})", ""]
    return md


LAUNCH_FLOOR_OF = {"decode_splitk_launch": "decode_splitk"}  # floor/<impl>/... -> the variant it floors


def launch_floor_section(cases) -> list:
    """A variant's launch floor (floor/<impl>/<dtype>/<workload>/<shape>/<mode>: empty kernels with the
    variant's own grids, clusters and shared memory) beside the variant's time at the same shape and
    mode: what its launches cost with none of the work."""
    by_name = {c.name: c for c in cases}
    floors = [c for c in cases if c.op == "floor" and c.impl in LAUNCH_FLOOR_OF and c.ok]
    if not floors:
        return []
    md = ["## Launch floors", "",
          "Empty kernels launched with a variant's own grids, block size, dynamic shared memory, "
          "clusters and PDL handshake at each shape (`floor/<variant>_launch/...`), timed like the "
          "variant: what its launches cost with none of its work. clusters: the plan's clusters / how "
          "many the GPU holds at once (more than that run in waves).", ""]
    groups = {}
    for c in floors:
        groups.setdefault((LAUNCH_FLOOR_OF[c.impl], c.workload, c.dtype), {}).setdefault(
            c.shape_label, {})[c.mode] = c
    for (variant, workload, dtype), shapes in groups.items():
        modes = [m for m in ("cold", "hot") if any(m in s for s in shapes.values())]
        md += [f"### `{variant}` · {workload} · {dtype}", "",
               "| shape | splits | clusters | " + " | ".join(
                   f"floor {m} | `{variant}` {m} | floor share {m}" for m in modes) + " |",
               "|---|---:|---:|" + "---:|" * (3 * len(modes))]
        for label in sorted(shapes, key=lambda l: shape_key(next(iter(shapes[l].values())))):
            row = shapes[label]
            first = next(iter(row.values()))
            splits = first.counters.get("splits")
            clusters = first.counters.get("clusters")
            active = first.counters.get("max_active_clusters")
            cells = [f"`{label}`", f"{splits:.0f}" if splits is not None else "–",
                     f"{clusters:.0f} / {active:.0f}" if clusters else "–"]
            for m in modes:
                f = row.get(m)
                v = by_name.get(f"attention/{variant}/{dtype}/{workload}/{label}/{m}")
                fv = f.median_us if f else None
                vv = v.median_us if v is not None and v.ok else None
                cells += [_fmt(fv, "µs") if fv is not None else "–",
                          _fmt(vv, "µs") if vv is not None else "–",
                          f"{fv / vv:.0%}" if fv is not None and vv else "–"]
            md.append("| " + " | ".join(cells) + " |")
        md.append("")
        md += cold_penalty_table(variant, workload, dtype, shapes, by_name, cases)
    return md


def cold_penalty_table(variant: str, workload: str, dtype: str, floors: dict, by_name: dict, cases) -> list:
    """Where a cold launch's extra time goes, at each shape with the variant, its launch floor and the
    fastest PyTorch baseline timed both cold and hot: cold minus hot for the variant, for its floor (the
    launches' share) and the rest (the variant's own: mostly the flush's dirty lines written back as its
    misses evict them; with a flush that leaves clean lines the large shapes' cold time is their hot time
    within 1 µs, results/h200/history/2026-11-30_session17_experiments/flush_diagnostic/), beside the same
    difference for the PyTorch baseline that is fastest cold."""
    rows = []
    for label in sorted(floors, key=lambda l: shape_key(next(iter(floors[l].values())))):
        fc, fh = floors[label].get("cold"), floors[label].get("hot")
        name = f"attention/{variant}/{dtype}/{workload}/{label}/"
        vc, vh = by_name.get(name + "cold"), by_name.get(name + "hot")
        if not all(c is not None and usable(c) for c in (fc, fh, vc, vh)):
            continue
        torch = [c for c in cases if c.op == "attention" and c.is_torch and c.dtype == dtype and c.mode == "cold"
                 and c.workload == workload and c.shape_label == label and usable(c)]
        best = min(torch, key=lambda c: c.median_us) if torch else None
        best_hot = by_name.get(best.name.removesuffix("/cold") + "/hot") if best else None
        variant_gap, floor_gap = vc.median_us - vh.median_us, fc.median_us - fh.median_us
        torch_gap = "–"
        if best_hot is not None and usable(best_hot):
            torch_gap = _fmt(best.median_us - best_hot.median_us, "µs")
        rows.append(f"| `{label}` | {_fmt(variant_gap, 'µs')} | {_fmt(floor_gap, 'µs')} | "
                    f"{_fmt(variant_gap - floor_gap, 'µs')} | " + (f"`{best.impl}` | {torch_gap}" if best else "– | –")
                    + " |")
    if not rows:
        return []
    return [f"Cold minus hot, `{variant}` · {workload} · {dtype}: the variant's, its launch floor's (the "
            "launches' share), the rest (its own: at the large shapes, the flush's dirty lines written back, "
            "which a flush leaving clean lines removes; session 17), and the fastest PyTorch baseline's (cold) "
            "for comparison.", "",
            f"| shape | `{variant}` | launch floor | rest | fastest PyTorch | its cold − hot |",
            "|---|---:|---:|---:|---|---:|", *rows, ""]


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
    for impl, label in (("empty_kernel", "empty kernel"), ("empty_kernel_pdl", "empty kernel, launched with PDL")):
        floors = [f"{c.mode} {_fmt(c.median_us, 'µs')}" for c in run.cases
                  if c.op == "floor" and c.impl == impl and c.ok]
        if floors:
            out.append(f"| launch floor ({label}, median) | {', '.join(floors)} |")
    out.append(f"| result files | {', '.join(f'`{f}`' for f in run.files)} |")
    return out


def warnings(run: sbresults.Run) -> list:
    ctx, out = run.context, []
    if ctx.get("build_type") and ctx["build_type"] != "Release":
        out.append(f"solbench was built as {ctx['build_type']}, not Release.")
    if ctx.get("library_build_type") == "debug":
        clocked = [c for c in run.cases if c.ok and not c.manual_time]
        if clocked:
            out.append(f"Google Benchmark is a debug build, and {len(clocked)} case(s) were timed by its own clock "
                       "(not `/manual_time`), so their times include the library's overhead: " +
                       ", ".join(f"`{c.name}`" for c in clocked))
        else:
            out.append("Google Benchmark is a debug build (the library installed where the run was made). No figure "
                       "here depends on it: every case was timed by the harness's CUDA events around its launches "
                       "(`/manual_time`), and the library's own code runs outside them.")
    odd = [c for c in run.cases if c.ok and implausible(c)]
    if odd:
        out.append(f"{len(odd)} case(s) above {IMPLAUSIBLE_SOL_PCT:,}% of speed of light, a broken "
                   "measurement (left out of comparisons and plots): " +
                   ", ".join(f"`{c.name}`" for c in odd))
    failed = [c for c in run.cases if c.failed]
    if failed:
        out.append(f"{len(failed)} case(s) failed: " + ", ".join(f"`{c.name}`" for c in failed))
    return out


# ---------------------------------------------------------------- plots

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
        torch = impl.startswith(sbresults.TORCH_PREFIX)
        return {"color": self.color.get(impl), "linestyle": "--" if torch else "-",
                "marker": "s" if torch else "o", "markersize": 4, "label": impl}

    def _save(self, fig, name: str) -> str:
        fig.tight_layout()
        fig.savefig(self.out_dir / name, dpi=130, bbox_inches="tight")
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

    def across_runs(self, ratios: dict, shapes: list, labels: list, kinds: list, name: str, title: str) -> str:
        """One slot per decode shape, a point per run (oldest left, newest right within the slot): the best
        SDPA backend's time over ours. kinds[i] is run i's style: 'latest', 'same' (`latest.json`'s attention
        kernels) or 'earlier'. Left: every ratio; right: the band within 2% of 1.0."""
        style = {"earlier": {"color": "0.65", "marker": "o", "markersize": 3, "label": "earlier kernels"},
                 "same": {"color": "tab:blue", "marker": "o", "markersize": 4,
                          "label": "runs of latest.json's attention kernels"},
                 "latest": {"color": "black", "marker": "D", "markersize": 5, "label": "latest.json's run"}}
        n = max(len(kinds) - 1, 1)
        fig, axes = self.plt.subplots(1, 2, figsize=(13, 5.2))
        for ax, zoom in zip(axes, (False, True)):
            for x, shape in enumerate(shapes):
                for i, v in sorted(ratios[shape], key=lambda p: kinds[p[0]] != "earlier"):  # earlier ones beneath
                    ax.plot(x - 0.3 + 0.6 * i / n, v, linestyle="none", **style[kinds[i]])
            ax.axhline(1.0, color="black", linewidth=1)
            ax.set_xticks(range(len(shapes)))
            ax.set_xticklabels(labels, rotation=70, fontsize=7)
            ax.grid(True, axis="y", alpha=0.3)
            if zoom:
                ax.set_ylim(0.98, 1.02)
            ax.set(ylabel="best SDPA time ÷ decode_splitk time",
                   title="within 2% of 1.0 (points outside not shown)" if zoom else "every run")
        fig.suptitle(title)
        self._legend(fig, [axes[0]])
        return self._save(fig, name)


def decode_shape_label(shape: str) -> str:
    """b16_hq32_hkv8_d128_q1_kv32768 -> 'GQA b16 KV 32768' (MHA where every q head has its own kv head)."""
    f = sbresults.parse_shape(shape)
    return f"{'MHA' if f['heads_q'] == f['heads_kv'] else 'GQA'} b{f['batch']} KV {f['kv_len']}"


def across_runs_section(results_dir: Path, plotter: Plotter | None) -> list:
    """The acceptance items over latest.json and history/'s runs (acceptance.py --across-runs), and the
    decode ratios to SDPA over them as a plot."""
    import acceptance  # it imports this module
    runs = acceptance.committed_runs(results_dir)
    if len(runs) < 2:
        return []
    md = ["## Across the committed runs", "",
          "Each acceptance item that a run's JSON holds (`scripts/acceptance.py --across-runs`), on every run "
          "committed here: `latest.json` and the runs in `history/` (full runs, or one benchmark set's), oldest "
          "first, each with its own do_bench cross-check where one was kept. The runs differ in GPU (the first 8 hex digits of its UUID; — in the "
          "runs from before the UUID was recorded), timing protocol and kernels (the fingerprints of the "
          "sources in `kernels/rmsnorm` and in `kernels/attention`), so a column that moves between runs of the "
          "same kernels and protocol moves with the GPU. Each "
          "cell: the item's headline figure (its worst case), ✗ where the item is not met, — where the run "
          "does not hold it.", "", *acceptance.across_runs(results_dir, runs)]
    ratios = acceptance.decode_ratios_by_run(runs)
    if plotter and ratios:
        shapes = sorted(ratios, key=acceptance.decode_shape_key)
        now, _, same = acceptance.latest_attention_kernels(runs)
        kinds = ["latest" if i == now else "same" if i in same else "earlier" for i in range(len(runs))]
        name = plotter.across_runs(ratios, shapes, [decode_shape_label(s) for s in shapes], kinds,
                                   "across_runs_decode_vs_sdpa.png",
                                   f"decode_splitk against the best SDPA backend, bf16, cold, over {len(runs)} runs")
        md += [f"![{name}](plots/{name})", ""]
    return md


def group_plots(plotter: Plotter, run: sbresults.Run, key: tuple, cases) -> list:
    op, workload, dtype, mode = key
    metric = headline_metric(op, workload)
    ceiling = run.ceiling(CEILING_OF[metric])
    slug = "_".join(p for p in key if p)
    cases = [c for c in cases if c.impl not in TIME_ONLY_REFERENCES]
    names = []
    for s in SWEEPS:
        panels = sweep_panels(cases, s) if (s.op, s.workload) == (op, workload) else []
        if panels:
            names.append(plotter.metric_vs_field(
                panels, s.x, metric, f"{slug}_{SLUG[metric]}_vs_{s.x}.png",
                title=f"{' '.join(p for p in key if p)}: {metric} vs {s.x}", xlabel=s.xlabel,
                ceiling=ceiling,
                ceiling_label=f"{CEILING_NAME[CEILING_OF[metric]]} ceiling {ceiling:,.0f} "
                              f"{metric} (measured)" if ceiling else ""))
    return names


E2E_OURS = "solbench"                # bench_e2e's layer with this suite's kernels
E2E_REST = "ref_rest_of_layer"       # the same layer without its norms and attention
# Ours in part (one of our kernels, the other PyTorch's as torch_eager runs it), against torch_eager.
E2E_PARTS = (("solbench_norms", "our RMSNorm alone"), ("solbench_attention", "our attention alone"))


def e2e_section(cases) -> list:
    """bench_e2e: per layer shape (cold), the fastest PyTorch layer against ours, and what the two
    RMSNorms and the attention cost inside each (the layer's time less ref_rest_of_layer's, the same ops
    without them), as time and as a share of the layer."""
    by_key = {}
    for c in cases:
        if c.op == "e2e" and c.mode == "cold" and usable(c):
            by_key.setdefault((c.workload, c.dtype, c.shape_label), {})[c.impl] = c
    rows = {}
    for (workload, dtype, label), impls in by_key.items():
        ours, rest = impls.get(E2E_OURS), impls.get(E2E_REST)
        torch = [c for c in impls.values() if c.is_torch]
        if ours is None or rest is None or not torch:
            continue
        best = min(torch, key=lambda c: c.median_us)
        theirs, mine = best.median_us - rest.median_us, ours.median_us - rest.median_us
        eager = impls.get("torch_eager")
        parts = [f"{eager.median_us / impls[p].median_us:.3f}×" if eager is not None and p in impls else "–"
                 for p, _ in E2E_PARTS]
        rows.setdefault((workload, dtype), []).append(
            (shape_key(ours), f"| `{label}` | `{best.impl}` {_fmt(best.median_us, 'µs')} | "
             f"{_fmt(ours.median_us, 'µs')} | **{best.median_us / ours.median_us:.3f}×** | "
             f"{_fmt(rest.median_us, 'µs')} | {_fmt(theirs, 'µs')} ({theirs / best.median_us:.0%}) | "
             f"{_fmt(mine, 'µs')} ({mine / ours.median_us:.0%}) | " + " | ".join(parts) + " |"))
    if not rows:
        return []
    md = ["## End to end: one decoder layer", "",
          "`bench_e2e` times one Llama-style decoder layer (RMSNorm, q/k/v projections, RoPE, the KV cache "
          f"write, attention, o projection, RMSNorm, SwiGLU MLP, two residual adds), cold. `{E2E_OURS}` "
          "computes the two RMSNorms with `vectorized` and the attention with `decode_splitk` (decode) or "
          "`wgmma_flash` (prefill; `tiled_flash` where it cannot run); the PyTorch layers use `at::rms_norm` and SDPA (`torch_eager`: SDPA's "
          "own choice of backend); everything else is the same PyTorch ops. "
          f"`{E2E_REST}` runs the layer without its norms and attention, so each layer's time less "
          "its time is what those cost inside the layer (with the launch gaps between them). "
          f"{' and '.join(f'`{p}`' for p, _ in E2E_PARTS)} swap in one of our kernels only (the other as "
          "`torch_eager` runs it): their columns give `torch_eager`'s time over theirs. Every layer "
          "is checked against the same layer in fp32 with fp64 attention before it is timed.", ""]
    for (workload, dtype), lines in rows.items():
        md += [f"### e2e · {workload} · {dtype} · cold", "",
               "| shape | fastest PyTorch layer | ours | speedup | rest of the layer | norms + attention, "
               "PyTorch (share) | norms + attention, ours (share) | "
               + " | ".join(f"speedup, {what}" for _, what in E2E_PARTS) + " |",
               "|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(E2E_PARTS),
               *[line for _, line in sorted(lines)], ""]
    return md


# ---------------------------------------------------------------- report

def render(run: sbresults.Run, results_dir: Path, command: str, plotter: Plotter | None,
           anchors: dict | None = None, crosscheck: dict | None = None, across: bool = False,
           timeline: dict | None = None) -> str:
    """REPORT.md's text; `across`: add the section on every committed run (the report of latest.json)."""
    anchors = anchors or {}
    ctx = run.context
    md = [f"<!-- GENERATED by `{command}`: do not edit by hand. -->",
          f"# solbench results: {ctx.get('gpu_name', 'unknown GPU')}", "",
          f"Generated by `{command}` from the Google Benchmark JSON listed below. **Do not edit "
          "this file by hand**: rerun the command. Explanations go in `NOTES.md` next to it, "
          "which is inserted at the end.", "",
          "## Environment", "", *environment(run), "",
          "Reproduce the run:", "", "```sh", ctx.get("command", "(the run did not record its "
                                                   "command)"),
          # A run done in parts (run_suite.sh's BENCHES): each later part's command, in order.
          *[ctx[k] for k in sorted((k for k in ctx if re.fullmatch(r"command_\d+", k)), key=lambda k: int(k[8:]))],
          "```", ""]
    notes = warnings(run)
    if notes:
        md += ["**Warnings:**", "", *[f"- {n}" for n in notes], ""]
    md += summary_section(run.cases)
    md += ["## Results", "",
           "Each cell: median time over the repetitions (the fastest in the row in bold) · "
           "throughput against minimal bytes (or FLOPs) · % of speed of light against the "
           "ceilings measured in the same run (and, where the run has a `ref_copy` or `ref_kv_read` "
           "reference, GB/s as a % of a copy of the same bytes, or of a kernel that only reads a decode "
           "case's K and V, timed the same way) · "
           "speedup over the best PyTorch baseline at that "
           "shape · verification error relative to tolerance (≤ 1 passes) · split count, for a "
           "split-KV variant. cold = L2 flushed before each launch, hot = back-to-back launches "
           "in a CUDA graph" + (", each replay net of the graph's own launch where the run resolved it "
                                "(`graph_launch_us`, `graph_launch_off`)" if ctx.get("hot_timing", "net") == "net" else "") +
           "; never compare the two. ANCHORS: the figure of the same baseline and "
           "shape in ANCHORS.md (H200, 2026-11-29, PyTorch 2.11, triton do_bench, cold; "
           f"`{ANCHORS_FILE}`), a target measured by another tool, not a result of this run.", ""]
    for key, cases in group_cases(run.cases).items():
        metric = headline_metric(key[0], key[1])
        md += [f"### {' · '.join(p for p in key if p)}", "", *table(cases, metric, anchors), ""]
        for name in group_plots(plotter, run, key, cases) if plotter else []:
            md += [f"![{name}](plots/{name})", ""]
    md += e2e_section(run.cases)
    if timeline is not None:
        md += timeline_section(timeline, run)
    md += split_sweep_section(run.cases, plotter)
    md += launch_floor_section(run.cases)
    if crosscheck is not None:
        md += crosscheck_section(crosscheck, run, anchors)
    if across:
        md += across_runs_section(results_dir, plotter)
    if plotter:
        rooflines = []
        main = [c for c in run.cases if in_main_tables(c) and c.impl not in TIME_ONLY_REFERENCES]
        for mode in dict.fromkeys(c.mode for c in main):
            name = plotter.roofline([c for c in main if c.mode == mode],
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
        anchors = load_anchors(results_dir / ANCHORS_FILE)
        crosscheck = load_crosscheck(results_dir / CROSSCHECK_FILE)
        timeline = load_timeline(results_dir / TIMELINE_FILE)
    except (sbresults.ResultsError, ReportError, OSError) as e:
        print(f"report.py: error: {e}", file=sys.stderr)
        return 2
    plotter = None
    if not args.no_plots:
        try:
            plotter = Plotter(results_dir / "plots",
                              impl_order([c for c in run.cases if in_main_tables(c)]))
        except ImportError:
            print("report.py: error: matplotlib is needed for the plots (pip install matplotlib), "
                  "or pass --no-plots", file=sys.stderr)
            return 2
    command = "python3 scripts/report.py " + shlex.join(argv)
    try:
        text = render(run, results_dir, command, plotter, anchors, crosscheck, across=not args.run, timeline=timeline)
    except (sbresults.ResultsError, ReportError, OSError) as e:
        print(f"report.py: error: {e}", file=sys.stderr)
        return 2
    (results_dir / "REPORT.md").write_text(text)
    if plotter:
        for stale in set(p.name for p in plotter.out_dir.glob("*.png")) - set(plotter.written):
            (plotter.out_dir / stale).unlink()
    print(f"wrote {results_dir / 'REPORT.md'} and {len(plotter.written) if plotter else 0} plots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
