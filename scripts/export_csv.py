#!/usr/bin/env python3
"""Export solbench results (Google Benchmark JSON) as a tidy CSV: one row per case.

Columns: op, impl, dtype, workload, the shape fields (rows, hidden, batch, heads_q, heads_kv,
head_dim, q_len, kv_len, causal; empty where they don't apply), mode, median_us (median over
repetitions), gbps, tflops, sol_pct, err, splits (median counters; splits is the split count of a
split-KV variant, empty for the others), repetitions, error (the error or skip message; empty for a
good case). Google Benchmark's own CSV reporter is not used: it aborts when
two benchmark families report different counters.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sbresults  # noqa: E402

COLUMNS = (["op", "impl", "dtype", "workload", *sbresults.SHAPE_FIELDS, "mode", "median_us",
            "gbps", "tflops", "sol_pct", "err", "splits", "sm_mhz", "repetitions", "error"])
COUNTER_COLUMNS = {"gbps": "GB/s", "tflops": "TFLOP/s", "sol_pct": "sol_pct", "err": "err",
                   "splits": "splits", "sm_mhz": "sm_mhz"}


def _num(x) -> str:
    return "" if x is None else f"{x:.6g}"


def rows(run: sbresults.Run):
    for c in run.cases:
        row = {"op": c.op, "impl": c.impl, "dtype": c.dtype, "workload": c.workload,
               "mode": c.mode, "median_us": _num(c.median_us), "repetitions": c.repetitions,
               "error": c.error}
        for f in sbresults.SHAPE_FIELDS:
            value = c.shape.get(f, "")
            row[f] = str(value).lower() if isinstance(value, bool) else value
        for col, key in COUNTER_COLUMNS.items():
            row[col] = _num(c.counters.get(key)) if c.ok else ""
        yield row


def write(run: sbresults.Run, f) -> None:
    writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows(run))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", metavar="RUN",
                        help="JSON file(s) of one run, or a directory of them")
    parser.add_argument("-o", "--output", required=True, help="output CSV file ('-' for stdout)")
    args = parser.parse_args(argv)
    try:
        run = sbresults.load(args.runs)
    except (sbresults.ResultsError, OSError) as e:
        print(f"export_csv.py: error: {e}", file=sys.stderr)
        return 2
    if args.output == "-":
        write(run, sys.stdout)
    else:
        with open(args.output, "w", newline="") as f:
            write(run, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
