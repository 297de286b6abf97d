"""bench_torch: PyTorch-side implementations (torch.compile, Triton, FlexAttention, the solbench operators) timed by
the suite's C++ harness, in the suite's case names and Google Benchmark JSON. bench/bench_torch.py runs main()."""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
USAGE_EXIT = 2

HELP = f"""usage: bench/bench_torch.py [--build-dir=DIR] [the C++ bench binaries' flags]

Times PyTorch-side implementations with the suite's harness (libsolbench_pybench.so: the same warm-up, cold and
hot protocols, counters and run context as bench_rmsnorm and bench_attention), after verifying each against the
suite's fp64 reference and tolerance, and names its cases as those binaries do:
  rmsnorm/<impl>/<dtype>/t<rows>_h<hidden>/<mode>                  (also fused_add_rmsnorm/, rmsnorm_backward/)
  attention/<impl>/<dtype>/<prefill|decode>/<shape>/<mode>               (also e2e/, bench_e2e's layer)
Implementations:
  rmsnorm            torch_compile, torch_compile_max_autotune (F.rms_norm), torch_compile_composite,
                     torch_compile_composite_max_autotune (Hugging Face's composite), triton, solbench_op
  fused_add_rmsnorm  torch_compile (the in-place eager composite), triton, solbench_op (torch.ops.solbench.
                     fused_add_rms_norm)
  rmsnorm_backward   torch_compile (F.rms_norm's backward, through autograd), triton (two kernels: dx and the
                     dw partials, then their sum), solbench_op (torch.ops.solbench.rms_norm_backward)
  attention          torch_compile_composite (the manual composite), torch_flex_attention, solbench_op
  e2e (bench_e2e's decoder layer, fp16 and bf16): torch_compile (the stock layer compiled), solbench_op (the layer
                     compiled with solbench.rms_norm and solbench.attention in it)
  attention at paged shapes (<decode shape>_p<page>_<dist>, the set paged): torch_sdpa_masked (SDPA over the
                     batch padded to its longest sequence, each sequence's keys masked), torch_flex_attention (a
                     block mask of each sequence's keys), solbench_op (solbench.attention over the page pools)
A row that cannot run (an operator not built, PyTorch refusing) is skipped with its reason. Counters beside
the harness's: compile_s (the row's first call, compilation included, seconds), graphs and recompiles (Dynamo's,
torch.compile rows).

  --build-dir=DIR   the CMake build with libsolbench_pybench.so and libsolbench_ops.so (default build/release;
                    SOLBENCH_PYBENCH_LIB and SOLBENCH_OPS_LIB name the libraries themselves)
Every other flag goes to the harness (its --help follows): --shapes=SPEC takes RMSNorm, attention, paged and
layer shapes and sets alike, --dtypes, --benchmark_filter, --benchmark_repetitions, --benchmark_out, --profile.
Exit status: 0, 1 when a case failed verification or raised, 2 for a bad flag or a missing library, 77 without
a GPU.
"""


def split_args(argv: list) -> tuple:
    """(the build directory, the arguments for the harness). A malformed --build-dir is a ValueError."""
    build, rest = ROOT / "build" / "release", []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--build-dir":
            if i + 1 >= len(argv) or not argv[i + 1]:
                raise ValueError("--build-dir needs a value: the CMake build directory")
            build, i = Path(argv[i + 1]), i + 2
            continue
        if a.startswith("--build-dir="):
            if not a.split("=", 1)[1]:
                raise ValueError("--build-dir= needs a value: the CMake build directory")
            build = Path(a.split("=", 1)[1])
        else:
            rest.append(a)
        i += 1
    if not build.is_dir():
        raise ValueError(f"--build-dir: {build} is not a directory")
    return build, rest


def error(message: str) -> int:
    print(f"bench_torch: error: {message}", file=sys.stderr)
    return USAGE_EXIT


def context(harness) -> None:
    """The driver's run-context entries: its Python, torch, triton and solbench operator library."""
    import torch
    harness.add_context("python_version", sys.version.split()[0])
    harness.add_context("torch_python_version", torch.__version__)
    try:
        import triton
        harness.add_context("triton_version", triton.__version__)
    except ImportError as e:
        harness.add_context("triton_version", f"none ({e})")
    from .rows import solbench
    try:
        harness.add_context("solbench_ops_library", solbench().library_path or "registered before loading")
    except Exception as e:  # noqa: BLE001 - the rows say the same when they skip
        harness.add_context("solbench_ops_library", f"none ({e})")


def main(argv: list) -> int:
    if "--help" in argv[1:] or "-h" in argv[1:]:
        print(HELP, flush=True)
    try:
        build, rest = split_args(argv[1:])
    except ValueError as e:
        return error(str(e))
    ops_lib = build / "python" / "libsolbench_ops.so"
    if "SOLBENCH_OPS_LIB" not in os.environ and ops_lib.is_file():
        os.environ["SOLBENCH_OPS_LIB"] = str(ops_lib)
    try:
        import torch
    except ImportError as e:
        return error(f"needs PyTorch for python3: {e}")
    from . import capi
    from .cases import Runner, implementations
    try:
        harness = capi.Harness(capi.library_path(build))
        harness.check_torch(torch.__version__)
    except capi.LibraryError as e:
        return error(str(e))
    for op, impls in implementations().items():
        for impl in impls:
            harness.add_impl(op, impl)
    context(harness)
    runner = Runner(harness)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the run as it ends a C++ binary's
    sys.stdout.flush()
    sys.stderr.flush()
    return harness.main(["bench_torch", *rest], runner.setup, runner.launch)
