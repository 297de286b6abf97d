#!/usr/bin/env python3
"""Summarise scripts/gpu_experiments.sh's timings: one row per case, each build's median per pass, and its
ratio to the default build of the same pass, averaged over the passes.

    python3 scripts/experiment_summary.py TIMINGS.txt [--control BUILD]

TIMINGS.txt holds lines `PASS BUILD CASE MICROSECONDS` (what gpu_experiments.sh writes). Passes alternate
the order of the builds (forward, then reverse), because the GPU drifts within one command: in one
session-7 command the default build, timed first, read 19-23% slower at ~10 us shapes than the three
builds after it, in its `cudaMemcpyAsync` reference as much as in its kernel; in another only the last
build read faster (results/h200/history/2026-11-29_session7_experiments/). A ratio to the default of
the same pass, averaged over a forward and a reverse pass, cancels a drift that is linear in time.
A ratio that rests on one pass only (a command cut before its second pass) is marked `(1 pass)` and
counted in a closing note: the default is then timed first or last, and such a ratio is not evidence
of a difference of a few percent (session 19 adopted two decode pipelines on one pass, and the full run
read them slower: results/h200/history/2026-11-30_session19_experiments/).
With --control BUILD (a build that runs the default's code under another name or switch: an A/A
control), each other build's per-pass ratios are also read against the control's of the same passes: the
build is `faster than the control` where each of its ratios is below every one of the control's,
`slower than the control` where each is above, and `within the control` otherwise. Session 49 (c239, c240)
saw two variants running the same code read 0.945-1.233 of each other a pass, hot, in one process, so a
mean ratio alone is no verdict. Over fewer than MIN_CONTROL_PASSES shared passes no verdict is given.
Exit 2 on a malformed file, when no case has a default figure to compare with, or when the control names
no build of the file.
"""
import argparse
import collections
import statistics
import sys

MIN_CONTROL_PASSES = 3


def parse(lines):
    """{case: {build: {pass: us}}}, the builds in first-seen order; ValueError naming a bad line."""
    table = collections.defaultdict(lambda: collections.defaultdict(dict))
    builds = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) != 4:
                raise ValueError
            pass_no, build, case, us = int(parts[0]), parts[1], parts[2], float(parts[3])
        except ValueError:
            raise ValueError(f"line {n}: expected 'PASS BUILD CASE MICROSECONDS', got '{line.strip()}'") from None
        if build not in builds:
            builds.append(build)
        table[case][build][pass_no] = us
    return table, builds


def summarise(table, builds, default="default"):
    """Rows of (case, build, per-pass figures, mean ratio to the default over the passes both have, how
    many passes that mean is over)."""
    rows = []
    for case, by_build in table.items():
        base = by_build.get(default, {})
        for build in builds:
            runs = by_build.get(build)
            if not runs:
                continue
            shared = [p for p in runs if p in base and base[p] > 0]
            ratio = statistics.mean(runs[p] / base[p] for p in shared) if shared and build != default else None
            rows.append((case, build, [runs[p] for p in sorted(runs)], ratio, len(shared) if ratio is not None else 0))
    return rows


def against_control(by_build, build, control, default="default"):
    """The verdict on build's per-pass ratios to the default against the control's over the same passes,
    or None where the case has fewer than MIN_CONTROL_PASSES such passes."""
    base, runs, ctrl = by_build.get(default, {}), by_build.get(build, {}), by_build.get(control, {})
    shared = [p for p in runs if p in ctrl and base.get(p, 0) > 0]
    if len(shared) < MIN_CONTROL_PASSES:
        return None
    mine = [runs[p] / base[p] for p in shared]
    theirs = [ctrl[p] / base[p] for p in shared]
    if max(mine) < min(theirs):
        return "faster than the control"
    if min(mine) > max(theirs):
        return "slower than the control"
    return "within the control"


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="experiment_summary.py", description=__doc__.split("\n")[0])
    ap.add_argument("timings", help="gpu_experiments.sh's timings.txt")
    ap.add_argument("--control", metavar="BUILD", help="an A/A control build to read the others against")
    args = ap.parse_args(argv[1:])  # bad usage: exit 2
    control = args.control
    try:
        with open(args.timings) as f:
            table, builds = parse(f)
    except (OSError, ValueError) as e:
        print(f"experiment_summary: {args.timings}: {e}", file=sys.stderr)
        return 2
    if control is not None and (control == "default" or control not in builds):
        print(f"experiment_summary: {args.timings}: --control {control} names no build other than the default "
              f"(builds: {' '.join(builds)})", file=sys.stderr)
        return 2
    rows = summarise(table, builds)
    if not any(r[3] is not None for r in rows):
        print(f"experiment_summary: {args.timings}: no case has both a default and another build", file=sys.stderr)
        return 2
    print("case, build: median us per pass; time / default's time in the same pass, mean over passes")
    for case, build, runs, ratio, passes in rows:
        verdict = ""
        if control is not None and ratio is not None and build != control:
            v = against_control(table[case], build, control)
            verdict = f"   {v}" if v else f"   (under {MIN_CONTROL_PASSES} passes with the control: no verdict)"
        print(f"{case:60s} {build:28s} " + " ".join(f"{u:9.2f}" for u in runs)
              + (f"   x{ratio:.3f}" if ratio is not None else "") + (" (1 pass)" if passes == 1 else "") + verdict)
    one_pass = sum(1 for r in rows if r[4] == 1)
    if one_pass:
        print(f"note: {one_pass} of {sum(1 for r in rows if r[3] is not None)} ratios rest on one pass "
              "(the default timed first or last in it): not evidence of a few-percent difference")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
