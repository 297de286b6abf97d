"""The environment table (the run's context: GPU, clocks, versions, measured ceilings), the command that
reproduces the run, and the warnings about it (debug builds, implausible figures, failed cases)."""
from __future__ import annotations

import re

import sbresults

from .common import CEILING_OF, IMPLAUSIBLE_SOL_PCT, MODE_ORDER, fmt, implausible

# (label, context key, unit). A key the run does not record shows as such; keys a run records beyond
# these are not shown.
ENV_ROWS = [
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
    ("FP8 GEMM ceiling (measured, cuBLASLt e4m3)", "gemm_fp8_tflops", "TFLOP/s"),
    ("date", "date", ""), ("host", "host_name", ""),
]
LISTED_CASES = 5  # a warning names this many cases, then counts the rest


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
    out += [f"| {label} | {_context_value(run.context.get(key), unit)} |" for label, key, unit in ENV_ROWS]
    for impl, label in (("empty_kernel", "empty kernel"), ("empty_kernel_pdl", "empty kernel, launched with PDL")):
        floors = [f"{c.mode} {fmt(c.median_us, 'µs')}" for c in sorted(
                  (c for c in run.cases if c.op == "floor" and c.impl == impl and c.ok),
                  key=lambda c: MODE_ORDER.index(c.mode) if c.mode in MODE_ORDER else len(MODE_ORDER))]
        if floors:
            out.append(f"| launch floor ({label}, median) | {', '.join(floors)} |")
    out.append(f"| result files | {', '.join(f'`{f}`' for f in run.files)} |")
    return out


def commands(run: sbresults.Run) -> list:
    """The command that made the run and, for a run made in parts (run_suite.sh's BENCHES), each later
    part's, in order."""
    ctx = run.context
    parts = sorted((k for k in ctx if re.fullmatch(r"command_\d+", k)), key=lambda k: int(k[8:]))
    return [ctx.get("command", "(the run did not record its command)"), *[ctx[k] for k in parts]]


def _names(cases) -> str:
    names = ", ".join(f"`{c.name}`" for c in cases[:LISTED_CASES])
    return names + (f" and {len(cases) - LISTED_CASES} more" if len(cases) > LISTED_CASES else "")


def warnings(run: sbresults.Run) -> list:
    ctx, out = run.context, []
    if run.incomplete:
        out.append("The run is incomplete: a bench run was cut short, and only the repetitions it finished are "
                   "here (its partial results file); cases it did not reach are missing.")
    if ctx.get("build_type") and ctx["build_type"] != "Release":
        out.append(f"solbench was built as {ctx['build_type']}, not Release.")
    if ctx.get("library_build_type") == "debug":
        clocked = [c for c in run.cases if c.ok and not c.manual_time]
        if clocked:
            out.append(f"Google Benchmark is a debug build, and {len(clocked)} case(s) were timed by its own clock "
                       "(not `/manual_time`), so their times include the library's overhead: " + _names(clocked))
        else:
            out.append("Google Benchmark is a debug build (the library installed where the run was made). No figure "
                       "here depends on it: every case was timed by the harness's CUDA events around its launches "
                       "(`/manual_time`), and the library's own code runs outside them.")
    odd = [c for c in run.cases if c.ok and implausible(c)]
    if odd:
        out.append(f"{len(odd)} case(s) above {IMPLAUSIBLE_SOL_PCT:,}% of speed of light, a broken "
                   "measurement (left out of comparisons and plots): " + _names(odd))
    failed = [c for c in run.cases if c.failed]
    if failed:
        out.append(f"{len(failed)} case(s) failed: " + _names(failed))
    return out
