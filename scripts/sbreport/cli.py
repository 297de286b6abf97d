"""python3 scripts/report.py RESULTS_DIR [--run FILE...] [--no-plots] [--readme PATH]

Writes RESULTS_DIR/REPORT.md (summary, plots, every implementation at a glance, the environment and the
command that reproduces the run), RESULTS_DIR/report/*.md (every shape, per op and workload; the cross-check)
and RESULTS_DIR/plots/*.png from one run: RESULTS_DIR/latest.json.xz unless --run names the file(s) or
directory of the run. Beside the run it reads RESULTS_DIR/anchors.json (ANCHORS.md's figures) and
RESULTS_DIR/crosscheck.json (scripts/crosscheck_torch.py's output) and RESULTS_DIR/train_profile_<impl>.json
(train_profile's per-op tables of a training step) when present. Every file under report/
and plots/ is generated: those this run did not produce are removed. --readme PATH also rewrites the results
table between the lines <!-- results:begin --> and <!-- results:end --> of PATH.

Exit status: 0 when written, 2 on bad input (a malformed file, missing README markers, no matplotlib).
"""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import sbresults

from .anchors import ANCHORS_FILE, load_anchors
from .common import ReportError, in_main_tables, impl_order
from .crosscheck import CROSSCHECK_FILE, load_crosscheck
from .readme import results_block, rewrite_readme
from .render import render
from .training import load_profiles

RUN_FILE = "latest.json.xz"
GENERATED = (("report", "*.md"), ("plots", "*.png"))


def parse_args(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="report.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results_dir", metavar="RESULTS_DIR", help="e.g. results/h200")
    parser.add_argument("--run", nargs="+", metavar="FILE", help=f"file(s) or directory of the run "
                        f"(default RESULTS_DIR/{RUN_FILE})")
    parser.add_argument("--no-plots", action="store_true", help="write the Markdown without plots")
    parser.add_argument("--readme", metavar="PATH", type=Path,
                        help="also rewrite the results table between the markers of this file")
    return parser.parse_args(argv)


def make_plotter(results_dir: Path, run: sbresults.Run):
    """The plotter, one colour per implementation of the main tables; a ReportError without matplotlib."""
    try:
        from .plots import Plotter
        return Plotter(results_dir / "plots", impl_order([c for c in run.cases if in_main_tables(c)]))
    except ImportError:
        raise ReportError("matplotlib is needed for the plots (pip install matplotlib), or pass --no-plots") from None


def write(results_dir: Path, files: dict, plotter) -> None:
    """Writes the generated files and removes the generated files of an earlier report that this one lacks."""
    for rel, text in files.items():
        (results_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (results_dir / rel).write_text(text.rstrip("\n") + "\n")
    made = set(files) | {f"plots/{n}" for n in (plotter.written if plotter else [])}
    for folder, pattern in GENERATED:
        for path in (results_dir / folder).glob(pattern):
            if f"{folder}/{path.name}" not in made:
                path.unlink()


def report_args(argv: list) -> list:
    """The arguments that shape the report, as its header records them: --readme writes elsewhere, so it goes."""
    kept, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--readme":
            skip = True
        elif not a.startswith("--readme="):
            kept.append(a)
    return kept


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    results_dir = Path(args.results_dir)
    command = "python3 scripts/report.py " + shlex.join(report_args(argv))
    try:
        if not results_dir.is_dir():
            raise ReportError(f"{results_dir}: no such directory")
        run = sbresults.load(args.run or [results_dir / RUN_FILE])
        anchors = load_anchors(results_dir / ANCHORS_FILE)
        crosscheck = load_crosscheck(results_dir / CROSSCHECK_FILE)
        plotter = None if args.no_plots else make_plotter(results_dir, run)
        files = render(run, command, plotter, anchors, crosscheck, load_profiles(results_dir))
        if args.readme:
            rewrite_readme(args.readme, results_block(run, args.readme, results_dir, command))
        write(results_dir, files, plotter)
    except (sbresults.ResultsError, ReportError, OSError) as e:
        print(f"report.py: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {results_dir / 'REPORT.md'}, {len(files) - 1} pages under {results_dir / 'report'} and "
          f"{len(plotter.written) if plotter else 0} plots" + (f", and the table in {args.readme}" if args.readme
                                                              else ""))
    return 0
