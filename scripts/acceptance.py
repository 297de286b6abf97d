#!/usr/bin/env python3
"""The measurable acceptance items of issues 2, 3 and 6, computed from a results directory.

    python3 scripts/acceptance.py results/h200 [--strict]
    python3 scripts/acceptance.py results/h200 --across-runs

Reads RESULTS_DIR/latest.json (the run), crosscheck_latest.json (its do_bench cross-check) and
anchors.json (the ANCHORS.md figures) and prints one Markdown row per item: the target, what the run
measured (the worst case named) and whether it is met. bf16, cold unless an item says otherwise, as the
issues ask. Exit status: 0; with --strict, 1 when an item is not met or cannot be evaluated; 2 when an
input is missing or malformed. NOTES.md's status table quotes this output; the items its text adds
(the README's test command, the sanitizers, fp16 and fp32 tests) are not in a run's JSON.

--across-runs evaluates the same items on every committed run (latest.json and the runs in history/,
each with its own cross-check where one was kept), oldest first: one row per run, the item's headline
figure in each cell, and how many runs met it; then each decode shape's ratio to the best SDPA backend
over those runs. The runs differ in GPU, timing protocol and kernels (each row names all three), so the
table says which verdicts follow a change of ours and which the H200 a run landed on. REPORT.md's section
"Across the committed runs" is this output.
"""
from __future__ import annotations

import argparse
import functools
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402
import sbresults  # noqa: E402

MiB = 1 << 20
# The targets, as the issues state them.
COPY_GBPS_RANGE = (4200 * 0.9, 4200 * 1.1)  # issue 2: copy 4.2 TB/s +- 10%
GEMM_TFLOPS_RANGE = (600.0, 900.0)          # issue 2
STREAM_BYTES = 256 * MiB                     # issues 3 and 6: the shapes that stream at least this much
STREAM_PCT = 90.0                            # ... reach this % of the run's copy ceiling
ANCHOR_SLACK = 0.03                          # issue 3: the torch.compile column of ANCHORS.md, 3% allowed
DECODE_SIZED = ("t1_h4096", "t64_h8192")     # issue 3: cold at or under torch.compile's figure, hot
HOT_FLOOR_RATIO = 1.5                        # ... within this many times the empty-kernel floor
B1_DECODE = "b1_hq32_hkv8_d128_q1_kv4096"    # issue 6: under 10 us
B1_DECODE_US = 10.0


class Row:
    """One item: `met` is None where the run does not hold what the item needs. `column` and `headline`
    are its short header and figure in the across-runs table."""

    def __init__(self, issue: int, item: str, target: str, measured: str, met: bool | None,
                 column: str = "", headline: str = ""):
        self.issue, self.item, self.target, self.measured, self.met = issue, item, target, measured, met
        self.column, self.headline = column or item, headline

    def markdown(self) -> str:
        verdict = "met" if self.met else "**not met**" if self.met is False else "not evaluated"
        return f"| {self.issue} | {self.item} | {self.target} | {self.measured} | {verdict} |"


def _cases(run: sbresults.Run) -> dict:
    return {c.name: c for c in run.cases if not c.error and c.median_us}


def _pct_of_copy(case) -> float:
    """The case's sol_pct: its bytes over the copy ceiling its own binary measured at start-up (a run's
    merged context keeps the first binary's ceilings only), for a memory-bound case the % of that copy."""
    if "sol_pct" not in case.counters:
        raise sbresults.ResultsError(f"{case.name}: no sol_pct counter (a run from before the counter?)")
    return case.counters["sol_pct"]


def _worst(pairs, fmt) -> str:
    """'lo–hi; lowest label' over (value, label) pairs: the range and where its low end is."""
    pairs = sorted(pairs)
    return f"{fmt(pairs[0][0])}–{fmt(pairs[-1][0])}; lowest {pairs[0][1]}"


def foundation(run: sbresults.Run, crosscheck: dict | None) -> list:
    ctx, rows = run.context, []
    if crosscheck is None:
        rows.append(Row(2, "harness against do_bench, cold", "every row within 5%", "no crosscheck_latest.json", None,
                        "do_bench within 5%"))
    else:
        outside = [r for r in crosscheck.get("rows", []) if not r.get("ok")]
        listed = "; ".join(f"`{r['case']}` {r['ratio']:.3f}" for r in outside)
        within = f"{crosscheck['cases'] - crosscheck['failed']} of {crosscheck['cases']}"
        rows.append(Row(2, "harness against do_bench, cold", "every row within 5%",
                        within + (f": {listed}" if listed else ""), not outside, "do_bench within 5%", within))
    copy, gemm = float(ctx.get("copy_gbps", 0)), float(ctx.get("gemm_tflops", 0))
    rows.append(Row(2, "ceilings", "copy 4.2 TB/s ± 10%, GEMM 600–900 TFLOP/s",
                    f"{copy:,.0f} GB/s, {gemm:,.0f} TFLOP/s",
                    (COPY_GBPS_RANGE[0] <= copy <= COPY_GBPS_RANGE[1] and GEMM_TFLOPS_RANGE[0] <= gemm <= GEMM_TFLOPS_RANGE[1])
                    if copy and gemm else None, "copy GB/s · GEMM TFLOP/s", f"{copy:,.0f} · {gemm:,.0f}"))
    return rows


def rmsnorm(run: sbresults.Run, anchors: dict) -> list:
    c = _cases(run)
    shapes = sorted({k.split("/")[3] for k in c if k.startswith("rmsnorm/vectorized/bf16/") and k.endswith("/cold")},
                    key=lambda s: [int(t[1:]) for t in s.split("_")])
    ours = {s: c[f"rmsnorm/vectorized/bf16/{s}/cold"] for s in shapes}
    rows = []
    big = [(_pct_of_copy(ours[s]), f"`{s}`") for s in shapes if ours[s].counters.get("bytes", 0) >= STREAM_BYTES]
    rows.append(Row(3, f"`vectorized` ≥ {STREAM_PCT:.0f}% of the copy ceiling at ≥ 256 MiB", f"{len(big)} shapes",
                    _worst(big, lambda v: f"{v:.1f}%") if big else "no such shape in the run",
                    min(big)[0] >= STREAM_PCT if big else None, "RMSNorm ≥ 90% of copy",
                    f"{min(big)[0]:.1f}%" if big else ""))
    vs = [(c[f"rmsnorm/torch_rms_norm/bf16/{s}/cold"].median_us / ours[s].median_us, f"`{s}`")
          for s in shapes if f"rmsnorm/torch_rms_norm/bf16/{s}/cold" in c]
    rows.append(Row(3, "`vectorized` ≥ 1.0× `at::rms_norm`", "every shape of the run",
                    _worst(vs, lambda v: f"{v:.3f}×") if vs else "no `at::rms_norm` case",
                    min(vs)[0] >= 1.0 if vs else None, "÷ `at::rms_norm`", f"{min(vs)[0]:.3f}×" if vs else ""))
    # Beside a shape below the line, what a bare copy of its bytes (`ref_copy`, cudaMemcpyAsync, timed the
    # same way) reads against the same anchor: where the copy is below the line too, no RMSNorm, which moves
    # the same bytes, can be expected above it on that GPU.
    compiled = []
    for s in shapes:
        copy = c.get(f"rmsnorm/ref_copy/bf16/{s}/cold")
        for figure in anchors.get(("rmsnorm", "bf16", s, "cold"), {}).get("torch_compile", []):
            beside = (f" (a copy of its bytes, `ref_copy`: {report.anchor_us(figure, copy) / copy.median_us:.3f}×)"
                      if copy else "")
            compiled.append((report.anchor_us(figure, ours[s]) / ours[s].median_us, f"`{s}`", beside))
    behind = ", ".join(f"{label} {v:.3f}×{beside}" for v, label, beside in sorted(compiled) if v < 1 - ANCHOR_SLACK)
    rows.append(Row(3, "≥ the torch.compile column of ANCHORS.md, 3% allowed", f"{len(compiled)} shapes",
                    (_worst(compiled, lambda v: f"{v:.3f}×") + (f"; below 0.97×: {behind}" if behind else ""))
                    if compiled else "no torch_compile anchor at the run's shapes",
                    not behind if compiled else None, "÷ torch.compile",
                    f"{min(compiled)[0]:.3f}× ({min(compiled)[1].strip('`')})" if compiled else ""))
    # `vectorized`'s decode-sized kernel is launched with programmatic dependent launch: the floor measured
    # the same way is the empty kernel launched so (a run before it has only the plain one). The plain
    # floor is shown beside it.
    # Each hot figure with its graph's launch count K (the `launches` counter), where the run records it,
    # and the graph's own launch G it was taken net of (protocol v378's `graph_launch_us`, where
    # `graph_launch_off` is 1): under v122 a microsecond kernel's hot time moved with K (G spread over its K
    # kernels); net of G it does not. Beside each ratio, the same ratio by graph / K (the figure plus G / K,
    # from the medians), where G was taken off both sides and both graphs have the same K (at another K,
    # graph / K compares different shares of G): session 49 (c239) saw a change to a kernel's latency move
    # time between G and the net figure, so a verdict that holds both ways does not rest on how G is
    # taken off.
    def graph_per_launch(case):
        k = case.counters.get("launches")
        if not k or case.counters.get("graph_launch_off", 0.0) < 0.5:
            return None
        return case.median_us + case.counters.get("graph_launch_us", 0.0) / k

    def both_ways(case):  # the ratio to the floor net of G, and by graph / K where comparable
        ratio, h, f = case.median_us / floor.median_us, graph_per_launch(case), graph_per_launch(floor)
        same_k = case.counters.get("launches") == floor.counters.get("launches")
        return ratio, f"{ratio:.2f}× (graph / K {h / f:.2f}×)" if h and f and same_k else f"{ratio:.2f}×"

    def at_k(case):
        k = case.counters.get("launches")
        text = f" at K {k:.0f}" if k else ""
        if "graph_launch_off" in case.counters:
            g = case.counters.get("graph_launch_us", 0.0)
            text += f" net of G {g:.2f} µs" if case.counters["graph_launch_off"] >= 0.5 else f" (G {g:.2f} µs unresolved)"
        return text

    # The range of a hot figure's repetitions, where they differ: a sub-microsecond figure's repetitions can
    # spread by a quarter (the PDL floor read 0.386-0.604 µs in 3611a58's run, session 60), which moves
    # the 1.5× verdict by more than any change of ours there.
    def spread(case):
        times = case.times_us
        if len(times) < 2 or max(times) - min(times) < 0.005:
            return ""
        return f", repetitions {min(times):.2f}–{max(times):.2f} µs"

    plain = c.get("floor/empty_kernel/hot")
    pdl = c.get("floor/empty_kernel_pdl/hot")
    floor = pdl or plain
    small, hot, vs_plain = [], [], []
    for s in DECODE_SIZED:
        figures = anchors.get(("rmsnorm", "bf16", s, "cold"), {}).get("torch_compile", [])
        if s in ours and figures:
            small.append((ours[s].median_us, report.anchor_us(figures[0], ours[s]), s))
        h = c.get(f"rmsnorm/vectorized/bf16/{s}/hot")
        if h and floor:
            hot.append((*both_ways(h), s, at_k(h) + spread(h)))
        if h and pdl and plain:
            vs_plain.append(f"`{s}` {h.median_us / plain.median_us:.2f}×")
    rows.append(Row(3, " and ".join(DECODE_SIZED) + " cold ≤ torch.compile", "ANCHORS.md's figures",
                    ", ".join(f"`{s}` {t:.2f} µs (anchor {a:.2f})" for t, a, s in small) or "not in the run",
                    all(t <= a for t, a, _ in small) if len(small) == len(DECODE_SIZED) else None,
                    "1 × 4096 · 64 × 8192 cold µs", " · ".join(f"{t:.2f}" for t, _, _ in small)))
    floor_note = ""
    if floor:
        beside = f", launched with PDL; plain launch {plain.median_us:.2f} µs: {', '.join(vs_plain)}" if vs_plain else ""
        floor_note = f" (floor {floor.median_us:.2f} µs hot{at_k(floor)}{spread(floor)}{beside})"
        # A copy of each shape's bytes (`ref_copy`, hot, timed the same way) against the same floor: where it
        # is past 1.5x too, no kernel that reads and writes those bytes is within the target on that GPU.
        copies = [(s, copy) for s in DECODE_SIZED if (copy := c.get(f"rmsnorm/ref_copy/bf16/{s}/hot"))]
        if copies:
            floor_note += "; a copy of the same bytes (`ref_copy`): " + ", ".join(
                f"`{s}` {copy.median_us / floor.median_us:.2f}×" for s, copy in copies)
    rows.append(Row(3, "the same two hot ≤ 1.5× the empty-kernel floor", f"{HOT_FLOOR_RATIO}×",
                    ", ".join(f"`{s}` {text}{k}" for _, text, s, k in hot) + floor_note if hot else "not in the run",
                    all(r <= HOT_FLOOR_RATIO for r, _, _, _ in hot) if len(hot) == len(DECODE_SIZED) else None,
                    "the same hot ÷ floor", " · ".join(f"{r:.2f}×" for r, _, _, _ in hot)))
    return rows


DECODE_PREFIX = "attention/decode_splitk/bf16/decode/"


def decode_vs_sdpa(c: dict) -> dict:
    """{decode shape: the best SDPA backend's cold time over ours}, bf16, where the run has both."""
    out = {}
    for k, ours in c.items():
        if k.startswith(DECODE_PREFIX) and k.endswith("/cold"):
            s = k[len(DECODE_PREFIX):-len("/cold")]
            sdpa = [v.median_us for n, v in c.items()
                    if n.startswith("attention/torch_sdpa_") and n.endswith(f"/bf16/decode/{s}/cold")]
            if sdpa:
                out[s] = min(sdpa) / ours.median_us
    return out


def decode(run: sbresults.Run) -> list:
    c = _cases(run)
    prefix = DECODE_PREFIX
    shapes = sorted(k[len(prefix):-len("/cold")] for k in c if k.startswith(prefix) and k.endswith("/cold"))
    ratios = sorted((v, f"`{s}`") for s, v in decode_vs_sdpa(c).items())
    below = [(v, s) for v, s in ratios if v < 1.0]

    def read_share(label: str, ratio: float) -> str:
        """Where the run has ref_kv_read at the shape (a kernel that only reads K and V): ours and the best
        SDPA backend (ratio: its time over ours) as shares of its rate, so a tie at the bytes floor reads as
        one; and where it has ref_kv_stream (the same read with decode_splitk's blocks and order), ours as a
        share of that, over 100% where our arithmetic is hidden behind our reads."""
        s = label.strip("`")
        read = c.get(f"attention/ref_kv_read/bf16/decode/{s}/cold")
        if read is None:
            return ""
        ours = c[prefix + s + "/cold"].median_us
        best = ratio * ours
        stream = c.get(f"attention/ref_kv_stream/bf16/decode/{s}/cold")
        own = f"; of the same read in our blocks' order, `ref_kv_stream`: {stream.median_us / ours:.1%}" if stream else ""
        return f" (of the K and V read: ours {read.median_us / ours:.1%}, SDPA {read.median_us / best:.1%}{own})"

    rows = [Row(6, "≥ 1.0× the best SDPA backend", f"every decode shape ({len(ratios)})",
                f"{len(ratios) - len(below)} of {len(ratios)}" +
                (": below, " + ", ".join(f"{s} {v:.3f}{read_share(s, v)}" for v, s in below) if below else ""),
                not below if ratios else None, "decode ÷ best SDPA ≥ 1.0",
                f"{len(ratios) - len(below)} of {len(ratios)} (lowest {ratios[0][0]:.3f})" if ratios else "")]
    big = [(_pct_of_copy(c[prefix + s + "/cold"]), f"`{s}`") for s in shapes
           if c[prefix + s + "/cold"].counters.get("bytes", 0) >= STREAM_BYTES]
    rows.append(Row(6, f"≥ {STREAM_PCT:.0f}% of the copy ceiling where K+V ≥ 256 MiB", f"{len(big)} shapes",
                    _worst(big, lambda v: f"{v:.1f}%") if big else "no such shape in the run",
                    min(big)[0] >= STREAM_PCT if big else None, "decode ≥ 90% of copy",
                    f"{min(big)[0]:.1f}%" if big else ""))
    b1 = c.get(prefix + B1_DECODE + "/cold")
    b1_read = c.get(f"attention/ref_kv_read/bf16/decode/{B1_DECODE}/cold")
    read_note = f" (a kernel that only reads K and V, `ref_kv_read`: {b1_read.median_us:.2f} µs)" if b1_read else ""
    rows.append(Row(6, f"`{B1_DECODE}`", f"< {B1_DECODE_US:.0f} µs",
                    f"{b1.median_us:.2f} µs{read_note}" if b1 else "not in the run",
                    b1.median_us < B1_DECODE_US if b1 else None, "b1 KV 4096 µs", f"{b1.median_us:.2f}" if b1 else ""))
    return rows


def evaluate_run(run: sbresults.Run, crosscheck: dict | None, anchors: dict) -> list:
    return foundation(run, crosscheck) + rmsnorm(run, anchors) + decode(run)


def evaluate(results_dir: Path, run: sbresults.Run | None = None) -> list:
    run = run or sbresults.load(results_dir / "latest.json")
    xc_path = results_dir / "crosscheck_latest.json"
    crosscheck = report._json(xc_path) if xc_path.is_file() else None
    anchors = report.load_anchors(results_dir / report.ANCHORS_FILE)
    return evaluate_run(run, crosscheck, anchors)


# ---------------------------------------------------------------- across the committed runs

# A run in history/: <date>_<commit12>.json.xz (or .gz), a second run of one build <...>_run2.json.xz, a run of one
# set alone <...>_decode.json.xz (its other items then read "not evaluated"). Its cross-check, where one was kept,
# is <date>_<commit12>_crosscheck.json.xz.
HISTORY_RUN = re.compile(r"(\d{4}-\d{2}-\d{2}_[0-9a-f]{12}(?:_run\d+|_decode)?)\.json(?:\.xz|\.gz)?")


class PastRun:
    def __init__(self, label: str, run: sbresults.Run, crosscheck: dict | None, latest: bool):
        self.label, self.run, self.crosscheck, self.latest = label, run, crosscheck, latest
        self.rows: list = []

    @functools.cached_property
    def decode_ratios(self) -> dict:
        return decode_vs_sdpa(_cases(self.run))


def committed_runs(results_dir: Path) -> list:
    """latest.json and every run in results_dir/history/ (HISTORY_RUN), oldest first (by the run's own date)."""
    runs = []
    hist = results_dir / "history"
    for path in sorted(hist.iterdir()) if hist.is_dir() else []:
        m = HISTORY_RUN.fullmatch(path.name)
        if not m:
            continue
        xcs = [hist / f"{m[1]}_crosscheck.json{ext}" for ext in (".xz", ".gz", "")]
        xc = next((report._json(x) for x in xcs if x.is_file()), None)
        runs.append(PastRun(m[1], sbresults.load(path), xc, False))
    latest = results_dir / "latest.json"
    xc_latest = results_dir / "crosscheck_latest.json"
    run = sbresults.load(latest)
    # Its name as run_suite.sh writes it (latest.json links there; a copy that followed the link is a file).
    m = HISTORY_RUN.fullmatch(latest.resolve().name)
    ctx = run.context
    label = m[1] if m else (f"{str(ctx['date'])[:10]}_{str(ctx['git_commit'])[:12]}"
                            if ctx.get("date") and ctx.get("git_commit") else "latest")
    runs.append(PastRun(label, run, report._json(xc_latest) if xc_latest.is_file() else None, True))
    runs.sort(key=lambda r: str(r.run.context.get("date", "")))
    return runs


def protocol(r: PastRun) -> str:
    return str(r.run.context.get("timing_protocol", "")).split(":")[0] or "—"


def _run_cells(r: PastRun) -> list:
    ctx = r.run.context
    uuid = str(ctx.get("gpu_uuid", ""))
    per_op = [ctx.get(f"kernels_fingerprint_{op}") for op in ("rmsnorm", "attention")]
    kernels = " · ".join(f[:6] for f in per_op) if all(per_op) else f"all: {str(ctx.get('kernels_fingerprint', '—'))[:8]}"
    label = f"`{r.label}`" + (" (`latest.json`)" if r.latest else "")
    return [label, uuid[4:12] if uuid.startswith("GPU-") else "—", protocol(r), kernels]


def across_runs(results_dir: Path, runs: list | None = None) -> list:
    """Markdown lines: the items over every committed run, then each decode shape over them."""
    runs = runs if runs is not None else committed_runs(results_dir)
    anchors = report.load_anchors(results_dir / report.ANCHORS_FILE)
    for r in runs:
        r.rows = evaluate_run(r.run, r.crosscheck, anchors)
    columns = [row.column for row in runs[-1].rows]
    md = ["| run | GPU | protocol | kernels (rmsnorm · attention) | " + " | ".join(columns) + " |",
          "|" + "---|" * (4 + len(columns))]
    for r in runs:
        cells = [("—" if row.met is None else row.headline + ("" if row.met else " ✗")) for row in r.rows]
        md.append("| " + " | ".join(_run_cells(r) + cells) + " |")
    met = []
    for i in range(len(columns)):
        verdicts = [r.rows[i].met for r in runs if r.rows[i].met is not None]
        met.append(f"{sum(verdicts)} of {len(verdicts)}")
    md += ["| " + " | ".join(["**met in**", "", "", ""] + met) + " |", ""]

    ratios = decode_ratios_by_run(runs)
    if ratios:
        now, fp, same = latest_attention_kernels(runs)
        n_gpus = len({runs[i].run.context.get("gpu_uuid", f"unrecorded {i}") for i in same})
        md += ["Each decode shape (bf16, cold): the best SDPA backend's time over `decode_splitk`'s (above 1.0, "
               "ours is faster), over every run that has both, and over the runs whose attention kernels are "
               f"`latest.json`'s (fingerprint `{fp}`: {len(same)} runs on {n_gpus} GPU{'s' * (n_gpus != 1)}, under the "
               f"protocols {', '.join(dict.fromkeys(protocol(runs[i]) for i in same))})." if fp else "", "",
               "| shape | runs | at or above 1.0 | lowest · median · highest | the runs of `latest.json`'s kernels: at "
               "or above 1.0 | their lowest–highest | `latest.json` |", "|---|---|---|---|---|---|---|"]
        for s in sorted(ratios, key=decode_shape_key):
            vs = [v for _, v in ratios[s]]
            mine = [v for i, v in ratios[s] if i in same]
            latest = next((f"{v:.3f}" for i, v in ratios[s] if i == now), "—")
            md.append(f"| `{s}` | {len(vs)} | {sum(v >= 1.0 for v in vs)} | {min(vs):.3f} · "
                      f"{statistics.median(vs):.3f} · {max(vs):.3f} | "
                      + (f"{sum(v >= 1.0 for v in mine)} of {len(mine)} | {min(mine):.3f}–{max(mine):.3f}"
                         if mine else "— | —") + f" | {latest} |")
        md.append("")
    return md


def decode_ratios_by_run(runs: list) -> dict:
    """{shape: [(run index, ratio)]}: what the across-runs table and plot show."""
    out = {}
    for i, r in enumerate(runs):
        for s, v in r.decode_ratios.items():
            out.setdefault(s, []).append((i, v))
    return out


def latest_attention_kernels(runs: list) -> tuple:
    """(latest.json's index, its attention kernels' fingerprint or None, the indices of the runs that share it)."""
    now = next(i for i, r in enumerate(runs) if r.latest)
    fp = runs[now].run.context.get("kernels_fingerprint_attention")
    same = [i for i, r in enumerate(runs) if fp and r.run.context.get("kernels_fingerprint_attention") == fp]
    return now, fp, same


def decode_shape_key(shape: str) -> tuple:
    """GQA before MHA, then batch, then KV length: b16_hq32_hkv8_d128_q1_kv32768 -> (0, 16, 32768, ...)."""
    f = sbresults.parse_shape(shape)
    return (f["heads_q"] == f["heads_kv"], f["batch"], f["kv_len"], f["head_dim"], f["q_len"], shape)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results_dir", type=Path)
    parser.add_argument("--strict", action="store_true", help="exit 1 when an item is not met")
    parser.add_argument("--across-runs", action="store_true",
                        help="every committed run (latest.json and history/'s), one row each")
    args = parser.parse_args(argv)
    if args.across_runs and args.strict:
        parser.error("--strict judges latest.json's items; --across-runs reports on every run and judges none")
    if args.across_runs:
        try:
            print("\n".join(across_runs(args.results_dir)))
        except (sbresults.ResultsError, report.ReportError, OSError) as e:
            print(f"acceptance.py: {e}", file=sys.stderr)
            return 2
        return 0
    try:
        run = sbresults.load(args.results_dir / "latest.json")
        rows = evaluate(args.results_dir, run)
    except (sbresults.ResultsError, report.ReportError, OSError) as e:
        print(f"acceptance.py: {e}", file=sys.stderr)
        return 2
    ctx = run.context
    print(f"Run: {ctx.get('git_commit', '?')[:12]} on {ctx.get('gpu_uuid', ctx.get('gpu_name', '?'))[:12]}, "
          f"protocol {ctx.get('timing_protocol', '?').split(':')[0]}\n")
    print("| issue | item | target | measured | |\n|---|---|---|---|---|")
    for r in rows:
        print(r.markdown())
    return 1 if args.strict and not all(r.met for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
