#!/usr/bin/env python3
"""Adopt a new run as results/<gpu>/'s current run and baseline, filing the one it replaces in history/.

    scripts/adopt_run.py results/h200 out/2026-12-01_0123456789ab.json --env out/env.txt \\
        --crosscheck out/crosscheck.json --timeline out/layer_timeline.json

The results folder holds one current run: its stamped file <date>_<commit12>.json, with latest.json and
baseline.json as symbolic links to it (one copy: every GPU command carries the whole tracked tree, which may
not pass 64 MiB; env_<stamp>.txt, crosscheck_latest.json and layer_timeline_latest.json beside them). A folder whose latest.json is a
copy of the stamped file instead is accepted too. This:
  1. compares the new run with baseline.json (scripts/regress.py --fingerprint-check) and files the
     report as history/<new date>_regress_<new commit>_vs_<old commit>.txt.gz;
  2. moves the current run to history/: <stamp>.json.xz, env_<stamp>.txt, <stamp>_crosscheck.json.xz,
     <stamp>_layer_timeline.json.xz
     (xz -9: history/ keeps its logs and JSONs over 8 KB compressed, tests/test_committed_results.py; xz
     stores the runs in 0.77 of gzip -9's bytes, session 51);
  3. installs the new run as <new stamp>.json, links latest.json and baseline.json to it, and installs its
     env, cross-check and layer timeline (a timeline from another GPU than the run's is refused).
It refuses to overwrite anything in history/ and changes nothing when a check fails. The regression
verdict (REGRESSED or not) does not stop it: a new baseline is a human decision, and the filed report
is its record. What it cannot write is printed at the end: history/README.md's rows, NOTES.md (on the new run) and
NOTES_EARLIER.md (where NOTES.md's entries on the old run go).
Exit 0 when adopted (or with --dry-run, when it would be), 2 on bad input.
"""
import argparse
import gzip
import json
import lzma
import re
import shutil
import subprocess
import sys
from pathlib import Path

STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})_([0-9a-f]{12})\.json$")
ROOT = Path(__file__).resolve().parents[1]


class AdoptError(Exception):
    pass


def current_stamp(results: Path) -> str:
    stamped = sorted(p.name for p in results.glob("*.json") if STAMP.match(p.name))
    if len(stamped) != 1:
        raise AdoptError(f"{results} should hold exactly one stamped run <date>_<commit12>.json, found "
                         f"{stamped or 'none'}")
    latest = results / "latest.json"
    if not latest.is_file() or latest.read_bytes() != (results / stamped[0]).read_bytes():
        raise AdoptError(f"{latest} is not a copy of {stamped[0]}: adopt only from a consistent folder")
    return stamped[0][:-len(".json")]


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)  # gzip -9 -n: the same bytes for the same input


def xzipped(data: bytes) -> bytes:
    return lzma.compress(data, preset=9)  # xz -9, one thread: the same bytes for the same input


def timeline_gpu(path: Path) -> str:
    """The GPU UUID a layer_timeline.py output records ("" when it records none); AdoptError when unreadable."""
    try:
        return json.loads(path.read_text()).get("env", {}).get("gpu_uuid", "")
    except (OSError, ValueError, AttributeError) as e:
        raise AdoptError(f"--timeline: {path} is not layer_timeline.py output: {e}") from None


def plan(results: Path, new: Path, env: Path | None, crosscheck: Path | None, timeline: Path | None = None):
    m = STAMP.match(new.name)
    if not m:
        raise AdoptError(f"{new.name}: the new run's file must be named <date>_<commit12>.json, as "
                         "scripts/run_suite.sh names it")
    for p, what in ((new, "new run"), (env, "--env"), (crosscheck, "--crosscheck"), (timeline, "--timeline")):
        if p is not None and not p.is_file():
            raise AdoptError(f"{what}: {p} is not a file")
    if timeline is not None:
        try:
            run_gpu = json.loads(new.read_text()).get("context", {}).get("gpu_uuid", "")
        except (OSError, ValueError) as e:
            raise AdoptError(f"new run: {new} is not JSON: {e}") from None
        tl_gpu = timeline_gpu(timeline)
        if not tl_gpu or tl_gpu != run_gpu:
            raise AdoptError(f"--timeline: measured on {tl_gpu or 'an unrecorded GPU'}, the run on "
                             f"{run_gpu or 'an unrecorded GPU'}: a timeline goes with the run of the same GPU")
    old = current_stamp(results)
    new_stamp = new.name[:-len(".json")]
    if new_stamp == old:
        raise AdoptError(f"{new.name} is already the current run")
    hist = results / "history"
    old_commit, (new_date, new_commit) = old.split("_", 1)[1], m.groups()
    moves = [(results / f"{old}.json", hist / f"{old}.json.xz", True)]
    if (results / f"env_{old}.txt").is_file():
        moves.append((results / f"env_{old}.txt", hist / f"env_{old}.txt", False))
    if (results / "crosscheck_latest.json").is_file():
        moves.append((results / "crosscheck_latest.json", hist / f"{old}_crosscheck.json.xz", True))
    if (results / "layer_timeline_latest.json").is_file():
        moves.append((results / "layer_timeline_latest.json", hist / f"{old}_layer_timeline.json.xz", True))
    regress_file = hist / f"{new_date}_regress_{new_commit}_vs_{old_commit}.txt.gz"
    for dest in [regress_file] + [d for _, d, _ in moves]:
        if dest.exists():
            raise AdoptError(f"{dest} exists: refusing to overwrite history")
    return old, new_stamp, regress_file, moves


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="the results folder, e.g. results/h200")
    ap.add_argument("new", type=Path, help="the new run's merged JSON, <date>_<commit12>.json")
    ap.add_argument("--env", type=Path, help="the new run's env.txt (scripts/gpu_run.sh's logs)")
    ap.add_argument("--crosscheck", type=Path, help="the new run's crosscheck.json")
    ap.add_argument("--timeline", type=Path, help="the new run's layer_timeline.json")
    ap.add_argument("--dry-run", action="store_true", help="check and print the plan, change nothing")
    args = ap.parse_args(argv)
    results = args.results
    try:
        if not (results / "history").is_dir():
            raise AdoptError(f"{results}/history is not a folder")
        old, new_stamp, regress_file, moves = plan(results, args.new, args.env, args.crosscheck, args.timeline)
    except AdoptError as e:
        print(f"adopt_run.py: error: {e}", file=sys.stderr)
        return 2
    print(f"current run {old} -> history/; new run {new_stamp} -> latest.json, baseline.json")
    for src, dest, xz in moves:
        print(f"  {src.name} -> history/{dest.name}" + (" (xz)" if xz else ""))
    print(f"  regress.py report -> history/{regress_file.name}")
    if args.dry_run:
        return 0
    r = subprocess.run([sys.executable, str(ROOT / "scripts/regress.py"), str(results / "baseline.json"),
                        str(args.new), "--fingerprint-check", str(ROOT)], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        print(f"adopt_run.py: error: regress.py failed (exit {r.returncode}), nothing changed:\n{r.stderr}",
              file=sys.stderr)
        return 2
    regress_file.write_bytes(gzipped(r.stdout.encode()))
    lines = r.stdout.splitlines()
    summary = [line for line in lines if line.startswith(("WARNING", "REGRESSED", "FAILED")) or " compared: " in line]
    summary += lines[-1:]
    for src, dest, xz in moves:
        if xz:
            dest.write_bytes(xzipped(src.read_bytes()))
            src.unlink()
        else:
            shutil.move(src, dest)
    shutil.copyfile(args.new, results / args.new.name)
    for name in ("latest.json", "baseline.json"):
        link = results / name
        link.unlink(missing_ok=True)  # the old run's link (dangling now) or copy
        link.symlink_to(args.new.name)
    if args.env:
        shutil.copyfile(args.env, results / f"env_{new_stamp}.txt")
    if args.crosscheck:
        shutil.copyfile(args.crosscheck, results / "crosscheck_latest.json")
    if args.timeline:
        shutil.copyfile(args.timeline, results / "layer_timeline_latest.json")
    print(f"regress.py exit {r.returncode} ({'a regression or a failed case' if r.returncode else 'no regression'}):")
    for line in summary:
        print(f"  {line}")
    print(f"\nStill to write by hand: history/README.md rows naming `{old}.json.xz` (with its env and "
          f"cross-check) and `{regress_file.name}`; NOTES.md, its entries on the old run moved to NOTES_EARLIER.md; "
          f"history READMEs that cite `../../{old}.json` now cite `../{old}.json.xz`; "
          f"then `python3 scripts/report.py {results}`.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
