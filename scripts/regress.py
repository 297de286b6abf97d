#!/usr/bin/env python3
"""Compare a solbench run against a baseline, case by case (median of repetitions).

Decision rule: a case REGRESSED when its median is slower than the baseline median by more than
the relative threshold (new > base * (1 + threshold)) AND the difference exceeds noise_k times
the noise, where noise is the larger of the two runs' estimates sigma-hat of the standard
deviation of one repetition: range / d2(n) for 2 <= n <= 10 repetitions (d2(n), the expected
range of n normal samples in sigma: the control-chart constants in D2 below), 1.4826 * MAD for
n > 10, and 0 (threshold only) for fewer than 2. A case slower by more than the threshold but
within the noise is SLOWER-BUT-NOISE; the same test in the other direction gives FAST; everything
else is SAME.
Why the range for small n: on the H200 each run's repetitions move with the SM clock (the GPU's
power management; the suite may not lock clocks), by up to ~10% within one run, often bimodally.
1.4826 * MAD is, for n = 3, 1.4826 times the smaller of the two distances to the median: it ignores
one of the three samples and underestimates that spread badly (two back-to-back runs of one build,
3 repetitions each, read as REGRESSED on 3 PyTorch cases under it, e.g. a cuDNN prefill case with
repetitions 172.8, 175.1, 188.3 us then 173.5, 186.2, 186.1 us: a MAD noise of 3.39 us though
run 1's samples span 15.5 us, range / d2(3) 9.17 us). The range uses every sample; beyond 10
repetitions it loses efficiency and MAD's robustness to outliers is worth more.
A difference must also exceed an absolute floor (--min-delta-us, default 1 us): on the H200 two
back-to-back runs of the same build move microsecond-scale cases by up to ~0.8 us (+17% on a 5 us
case) while each run's own repetitions agree within a few tenths of a microsecond, so the within-run
spread underestimates run-to-run drift near the launch floor (tests/scripts/test_regress.py checks
this on such runs). Regressions smaller than 1 us are not detectable by this suite.
Faster cases pass. A case with an error in the run (a failed verification, a crash: an error that is not a
"skipped: <reason>") is ERROR, a failure. A case of the baseline that the run does not hold, or skipped where
the baseline measured it, is MISSING, a failure unless --allow-missing is given; with --filter REGEX only the
baseline's cases whose names REGEX matches (re.search) must be there. A run that holds no case fails. A case
skipped in the run, or failed or skipped in the baseline, has no comparison and passes. Cases in the run but not
in the baseline (NEW) are listed. A run cut short (a partial results file, scripts/sbresults.py) is loaded with
a warning. Hot and cold are different case names, so they are never compared with each other.
Runs that record the SM clock after each case (the sm_mhz counter) get it beside each failing case
and a warning when the runs' median clocks differ by more than 3%: a case slower at a lower clock
may be the GPU, not the kernel. Where both runs also record the clock during a cold case's timed loop
(hold_mhz: the spins between its flushes and launches), that is shown too. The clock never changes a
verdict.

Output: the verdict (PASS or FAIL) with the counts, the regressions, errors and missing cases (20 of each,
then a count), then the runs compared and the warnings; the whole per-case table only with --table (on
stdout) or --table-out FILE. The last line repeats the verdict.

Exit status: 1 on any REGRESSED, ERROR or MISSING case or an empty run, 0 otherwise, 2 on bad usage or
malformed input.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sbresults  # noqa: E402

MAD_TO_SIGMA = 1.4826
# d2(n): expected range of n independent normal samples, in standard deviations.
D2 = {2: 1.128, 3: 1.693, 4: 2.059, 5: 2.326, 6: 2.534, 7: 2.704, 8: 2.847, 9: 2.970, 10: 3.078}
FAILING = ("REGRESSED", "ERROR")
LISTED = 20  # the summary lists this many cases of a kind, then counts the rest


def spread(times: list) -> tuple[float, str]:
    """Estimated standard deviation of one repetition (sigma-hat) and how it was computed."""
    n = len(times)
    if n in D2:
        return (max(times) - min(times)) / D2[n], f"range/d2({n})"
    if n > max(D2):
        med = statistics.median(times)
        return MAD_TO_SIGMA * statistics.median(abs(t - med) for t in times), "1.4826 x MAD"
    return 0.0, f"none ({n} repetitions): threshold only"


def verdict(base: float, new: float, noise: float, threshold: float, noise_k: float,
            min_delta_us: float = 0.0) -> str:
    diff = new - base
    beyond_noise = abs(diff) > max(noise_k * noise, min_delta_us)
    if new > base * (1 + threshold):
        return "REGRESSED" if beyond_noise else "SLOWER-BUT-NOISE"
    if new < base * (1 - threshold) and beyond_noise:
        return "FAST"
    return "SAME"


def compare(base_run: sbresults.Run, new_run: sbresults.Run, threshold: float, noise_k: float,
            min_delta_us: float = 0.0):
    """Rows (name, base_us, new_us, ratio, noise_us, verdict) in baseline order, then ERROR rows of the run's
    new cases; the missing cases (name, why: "" when the run does not hold it); the new case names; and notes:
    one a case not compared, one a kind of noise estimate that too few repetitions left out."""
    base, new = base_run.by_name(), new_run.by_name()
    rows, missing, notes, odd_noise = [], [], [], {}
    for name, b in base.items():
        n = new.get(name)
        if n is None:
            missing.append((name, ""))
        elif n.failed:
            rows.append((name, b.median_us, None, None, None, "ERROR"))
        elif n.skipped and b.ok:
            missing.append((name, f"skipped in the run: {n.error}"))
        elif not (n.ok and b.ok):
            side, case = ("run", n) if not n.ok else ("baseline", b)
            why = f"{side}: {case.error or 'no time'}"
            rows.append((name, b.median_us, n.median_us, None, None, "NO-COMPARISON"))
            notes.append(f"{name}: not compared, {why}")
        else:
            (nb, how_b), (nn, how_n) = spread(b.times_us), spread(n.times_us)
            for side, how in (("baseline", how_b), ("run", how_n)):
                if how.startswith("none"):
                    odd_noise.setdefault(f"{side} noise {how}", []).append(name)
            noise = max(nb, nn)
            rows.append((name, b.median_us, n.median_us, n.median_us / b.median_us, noise,
                         verdict(b.median_us, n.median_us, noise, threshold, noise_k, min_delta_us)))
    for how, names in odd_noise.items():
        more = ", ..." if len(names) > 3 else ""
        notes.append(f"{how}: {len(names)} cases ({', '.join(names[:3])}{more})")
    added = [name for name in new if name not in base]
    rows += [(name, None, None, None, None, "ERROR") for name in added if new[name].failed]
    return rows, missing, added, notes


def stale_ops(run: sbresults.Run, repo_root: str) -> list:
    """One line per op of the run whose recorded kernel fingerprint differs from the sources: the
    per-op kernels_fingerprint_<op> when the run has it, else the whole-tree kernels_fingerprint."""
    lines = []
    for op in dict.fromkeys(c.op for c in run.cases if c.op != "floor"):
        key = f"kernels_fingerprint_{op}"
        if key in run.context:
            recorded, sources = run.context[key], sbresults.kernels_fingerprint(repo_root, op)
        else:
            key, recorded, sources = "kernels_fingerprint", run.context.get("kernels_fingerprint"), \
                sbresults.kernels_fingerprint(repo_root)
        if recorded != sources:
            lines.append(f"{op}: run {key} {recorded!r} != {sources!r} of {repo_root}/kernels")
    return lines


def _us(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def table_lines(rows, missing, added, notes) -> list:
    """The whole per-case table, then every missing and new case and every note."""
    width = max([len("case")] + [len(r[0]) for r in rows])
    lines = [f"{'case':<{width}}  {'base us':>10}  {'new us':>10}  {'ratio':>6}  {'noise us':>8}  verdict"]
    for name, b, n, ratio, noise, v in rows:
        r = "-" if ratio is None else f"{ratio:.3f}"
        lines.append(f"{name:<{width}}  {_us(b):>10}  {_us(n):>10}  {r:>6}  {_us(noise):>8}  {v}")
    for title, names in ((f"MISSING (in baseline, not measured in run): {len(missing)}", missing),
                         (f"NEW (in run, not in baseline): {len(added)}", added), ("notes:", notes)):
        if names:
            lines += ["", title] + [f"  {n}" for n in names]
    return lines


def listed(items) -> list:
    """The first LISTED items, indented, and a count of the rest."""
    more = [f"  ... and {len(items) - LISTED} more (--table lists them all)"] if len(items) > LISTED else []
    return [f"  {item}" for item in items[:LISTED]] + more


def failure_detail(name: str, ratio, b, n, base_run: sbresults.Run, new_run: sbresults.Run) -> str:
    """A failing case's times and clocks, or its error."""
    if not ratio:
        return new_run.by_name()[name].error
    detail = f"{_us(b)} -> {_us(n)} us ({ratio - 1:+.1%})"
    mhz = [run.by_name()[name].counters.get("sm_mhz") for run in (base_run, new_run)]
    if all(mhz):
        detail += f", SM clock after the case {mhz[0]:.0f} -> {mhz[1]:.0f} MHz"
    during = [run.by_name()[name].counters.get("hold_mhz") for run in (base_run, new_run)]
    if all(during):
        detail += f", during its cold holds {during[0]:.0f} -> {during[1]:.0f} MHz"
    return detail


def describe(label: str, run: sbresults.Run) -> str:
    ctx = run.context
    return (f"{label}: {', '.join(run.files)} ({ctx.get('gpu_name', '?')}, commit "
            f"{ctx.get('git_commit', '?')}, kernels {ctx.get('kernels_fingerprint', '?')})")


def warnings(base_run: sbresults.Run, new_run: sbresults.Run, stale) -> list:
    """WARNING lines: a run cut short, a change of GPU, protocol, K / V placement or SM clock, stale results."""
    out = []
    for label, run in (("baseline", base_run), ("run", new_run)):
        if run.incomplete:
            out.append(f"WARNING: the {label} is incomplete (a bench run cut short: its partial results file); "
                       "the cases it did not finish are missing")
    gpus = [r.context.get("gpu_name") for r in (base_run, new_run)]
    if gpus[0] != gpus[1]:
        out.append(f"WARNING: different GPUs: baseline {gpus[0]!r}, run {gpus[1]!r}")
    uuids = [r.context.get("gpu_uuid") for r in (base_run, new_run)]
    if None not in uuids and uuids[0] != uuids[1] and gpus[0] == gpus[1]:
        out.append(f"WARNING: different physical GPUs of one model (H200s have timed the same decode kernel up to "
                   f"6.6% apart): baseline {uuids[0]}, run {uuids[1]}")
    if base_run.context.get("timing_protocol") != new_run.context.get("timing_protocol"):
        out.append(f"WARNING: different timing protocols (a change of method, not of kernels, moves times): "
                   f"baseline {base_run.context.get('timing_protocol', 'not recorded')!r}, "
                   f"run {new_run.context.get('timing_protocol', 'not recorded')!r}")
    placements = [r.context.get("kv_placement", "separate") for r in (base_run, new_run)]  # unrecorded: the default
    if placements[0] != placements[1]:
        out.append(f"WARNING: different K / V placements (the run context's kv_placement): "
                   f"baseline {placements[0]!r}, run {placements[1]!r}")
    out += [f"WARNING: stale results: {line}" for line in stale or []]
    clocks = [statistics.median(m) if m else None for m in
              ([c.counters["sm_mhz"] for c in r.cases if c.ok and c.counters.get("sm_mhz")]
               for r in (base_run, new_run))]
    if None not in clocks and abs(clocks[1] / clocks[0] - 1) > 0.03:
        out.append(f"WARNING: different SM clocks after the cases (median sm_mhz): baseline {clocks[0]:.0f} MHz, "
                   f"run {clocks[1]:.0f} MHz")
    return out


def summary(rows, missing, base_run, new_run, args) -> tuple[bool, list]:
    """Whether the run fails, and the summary's lines: the verdict with the counts, the counts per verdict,
    the regressions, errors and missing cases."""
    failing = [r for r in rows if r[5] in FAILING]
    expected = len(base_run.cases)
    if args.filter:
        expected = sum(bool(args.filter.search(c.name)) for c in base_run.cases)
        missing = [m for m in missing if args.filter.search(m[0])]
    fails = bool(failing) or not new_run.cases or (bool(missing) and not args.allow_missing)
    regressed = sum(r[5] == "REGRESSED" for r in rows)
    scope = f" matching --filter {args.filter.pattern!r}" if args.filter else ""
    head = (f"{'FAIL' if fails else 'PASS'}: {regressed} regressed, {len(failing) - regressed} errors, "
            f"{len(missing)} missing of the baseline's {expected} cases{scope}; the run holds {len(new_run.cases)}")
    lines = [head + (" (an empty run fails)" if not new_run.cases else "")]
    counts = {v: sum(r[5] == v for r in rows) for v in dict.fromkeys(r[5] for r in rows)}
    lines.append(f"{len(rows)} compared: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    shown = [f"{v}: {name}: {failure_detail(name, ratio, b, n, base_run, new_run)}"
             for name, b, n, ratio, _, v in failing]
    lines += shown[:LISTED] + ([f"... and {len(shown) - LISTED} more failing cases"] if len(shown) > LISTED else [])
    if missing:
        allowed = " (allowed: --allow-missing)" if args.allow_missing else ""
        lines.append(f"MISSING (in baseline, not measured in run): {len(missing)}{allowed}")
        lines += listed([f"{name}: {why}" if why else name for name, why in missing])
    return fails, lines


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("baseline", metavar="BASELINE", help="baseline JSON file or directory")
    parser.add_argument("run", metavar="RUN", help="JSON file or directory of the run to check")
    parser.add_argument("--threshold", type=float, default=0.05,
                        help="relative slowdown that counts (default 0.05 = 5%%)")
    parser.add_argument("--noise-k", type=float, default=3.0,
                        help="the slowdown must also exceed this many noise units (default 3)")
    parser.add_argument("--min-delta-us", type=float, default=1.0,
                        help="and by more than this many microseconds (default 1.0)")
    parser.add_argument("--fingerprint-check", metavar="REPO_ROOT",
                        help="warn when the run's kernels_fingerprint differs from the sources")
    parser.add_argument("--allow-missing", action="store_true",
                        help="list the baseline's cases the run does not hold, without failing on them")
    parser.add_argument("--filter", metavar="REGEX",
                        help="only the baseline's cases whose names REGEX matches (re.search) must be in the run: "
                             "the run's --benchmark_filter")
    parser.add_argument("--table", action="store_true", help="print the whole per-case table")
    parser.add_argument("--table-out", metavar="FILE", help="write the whole per-case table to FILE")
    args = parser.parse_args(argv)
    if args.threshold < 0 or args.noise_k < 0 or args.min_delta_us < 0:
        parser.error("--threshold, --noise-k and --min-delta-us must be >= 0")
    if args.filter is not None:
        try:
            args.filter = re.compile(args.filter)
        except re.error as e:
            parser.error(f"--filter: {args.filter!r} is not a regular expression ({e})")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        base_run, new_run = sbresults.load(args.baseline), sbresults.load(args.run)
        stale = args.fingerprint_check and stale_ops(new_run, args.fingerprint_check)
    except (sbresults.ResultsError, OSError) as e:
        print(f"regress.py: error: {e}", file=sys.stderr)
        return 2
    if args.filter and not any(args.filter.search(c.name) for c in base_run.cases):
        print(f"regress.py: error: --filter {args.filter.pattern!r} matches none of the baseline's cases",
              file=sys.stderr)
        return 2

    rows, missing, added, notes = compare(base_run, new_run, args.threshold, args.noise_k, args.min_delta_us)
    fails, lines = summary(rows, missing, base_run, new_run, args)
    lines += ["", f"regressed = slower by > {args.threshold:.1%} and by > max({args.noise_k:g} x noise, "
              f"{args.min_delta_us:g} us) (noise = range / d2(n) of n <= 10 repetitions, 1.4826 x MAD of more)",
              describe("baseline", base_run), describe("run     ", new_run)]
    lines += warnings(base_run, new_run, stale)
    if added:
        lines.append(f"NEW (in run, not in baseline): {len(added)}")
        lines += listed(added)
    not_compared = [n for n in notes if ": not compared, " in n]
    lines += [n for n in notes if n not in not_compared]
    if not_compared:
        lines.append(f"not compared (skipped or failed in the run or the baseline): {len(not_compared)} cases; "
                     "--table lists them")
    table = table_lines(rows, [f"{n}: {why}" if why else n for n, why in missing], added, notes)
    if args.table_out:
        try:
            Path(args.table_out).write_text("\n".join(table) + "\n")
        except OSError as e:
            print(f"regress.py: error: --table-out: {e}", file=sys.stderr)
            return 2
        lines.append(f"table: {args.table_out}")
    if args.table:
        lines += [""] + table + [""]
    print("\n".join(lines + ["FAIL" if fails else "PASS"]))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
