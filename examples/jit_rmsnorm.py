#!/usr/bin/env python3
"""Builds solbench::rms_norm with torch.utils.cpp_extension.load (no CMake) and checks it on the GPU against
torch.nn.functional.rms_norm.

The sources are the ones CMake compiles for this op: python/csrc/rmsnorm_op.cpp (the operator),
kernels/rmsnorm/rmsnorm.cpp (the registry) and the .cu file of every SB_VARIANT line in
kernels/rmsnorm/variants.def. Nothing is generated: rmsnorm.cpp expands variants.def with an X-macro at
compile time, and the .cu list is read here from the same file, as cmake/solbench.cmake's
solbench_variant_sources reads it. Only the RMSNorm op is built: each op's file registers its own schemas
(TORCH_LIBRARY_FRAGMENT), so attention's kernels and cuBLAS are not needed. The nvcc flags are CMake's:
sm_90a (an H100 or H200; set SOLBENCH_JIT_ARCH=sm_80 etc. for another GPU), -lineinfo, relaxed constexpr,
and PyTorch's extension defaults that hide __half/__nv_bfloat16 operators undone, as the kernels use them.

usage: examples/jit_rmsnorm.py [--build-only]
Exits 3 without a GPU (before building, which takes minutes; --build-only builds and stops), 1 when a result
is outside the suite's tolerance.
"""
import math
import os
import pathlib
import re
import subprocess
import sys

import torch
import torch.nn.functional as F
from torch.utils.cpp_extension import load

ROOT = pathlib.Path(__file__).resolve().parents[1]
NO_GPU_EXIT = 3


def variant_sources(op):
    """kernels/<op>/<name>.cu for each SB_VARIANT(name, ...) line of kernels/<op>/variants.def, in order."""
    names = re.findall(r"^SB_VARIANT\(([a-z0-9_]+),", (ROOT / "kernels" / op / "variants.def").read_text(), re.M)
    return [str(ROOT / "kernels" / op / f"{name}.cu") for name in names]


def shared_libstdcxx():
    """g++'s libstdc++.so.6, named on the link line: the module then shares PyTorch's libstdc++ even where g++
    would link its static archive (a toolchain without the libstdc++.so link), whose copy crashes the first
    number it formats (cmake/solbench.cmake does the same for the CMake build)."""
    compiler = os.environ.get("CXX", "c++")  # cpp_extension's linker
    found = subprocess.run([compiler, "-print-file-name=libstdc++.so.6"], capture_output=True, text=True).stdout.strip()
    return [found] if os.path.isabs(found) else []


def build():
    arch = os.environ.get("SOLBENCH_JIT_ARCH", "sm_90a")
    return load(
        name="solbench_jit_rmsnorm",
        sources=[str(ROOT / "python" / "csrc" / "rmsnorm_op.cpp"), str(ROOT / "kernels" / "rmsnorm" / "rmsnorm.cpp"),
                 *variant_sources("rmsnorm")],
        extra_include_paths=[str(ROOT / "kernels")],
        extra_cflags=["-O3"],
        extra_ldflags=shared_libstdcxx(),
        extra_cuda_cflags=[f"-gencode=arch=compute_{arch[3:]},code={arch}", "-O3", "-lineinfo",
                           "--expt-relaxed-constexpr", "-U__CUDA_NO_HALF_OPERATORS__",
                           "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__",
                           "-U__CUDA_NO_BFLOAT16_CONVERSIONS__"],
        is_python_module=False,  # a plain library: loading it registers torch.ops.solbench.rms_norm
        verbose=True)


def check(dtype, rows, hidden, eps=1e-6):
    """Ours against F.rms_norm: within the suite's per-element tolerance of its fp64 result
    (bench/rmsnorm_case.h), and the largest difference from its result in the same dtype, for information."""
    x = torch.randn(rows, hidden, device="cuda", dtype=dtype)
    w = (1 + 0.5 * torch.randn(hidden, device="cuda")).to(dtype)
    y = torch.ops.solbench.rms_norm(x, w, eps)
    ref = F.rms_norm(x.double(), [hidden], w.double(), eps)
    info = torch.finfo(dtype)  # unit roundoff eps / 2; the smallest subnormal smallest_normal * eps
    rel = 2 * info.eps + 2.0**-24 * (16 + 4 * math.sqrt(hidden))
    tol = ref.abs() * rel + 2 * info.smallest_normal * info.eps
    err = ((y.double() - ref).abs() / tol).max().item()
    same = (y.float() - F.rms_norm(x, [hidden], w, eps).float()).abs().max().item()
    ok = err <= 1.0
    print(f"{str(dtype):15} {rows:5} x {hidden:<6} error {err:6.3f} x tolerance, max |ours - F.rms_norm| {same:.3g}"
          f"  {'ok' if ok else 'FAILED'}")
    return ok


def main():
    build_only = "--build-only" in sys.argv[1:]
    if not build_only and not torch.cuda.is_available():
        try:
            torch.cuda.init()
            why = "torch.cuda.is_available() is False"
        except Exception as e:  # the driver's or the runtime's own words
            why = str(e).splitlines()[0]
        print(f"jit_rmsnorm.py: no GPU: {why}; nothing built (--build-only builds without one)", file=sys.stderr)
        return NO_GPU_EXIT
    build()
    print(f"built and loaded: {torch.ops.solbench.rms_norm.default._schema}")
    if build_only:
        return 0
    torch.manual_seed(0)
    results = [check(dtype, rows, hidden) for dtype in (torch.float32, torch.float16, torch.bfloat16)
               for rows, hidden in ((1, 4096), (8, 8192), (3, 1000))]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
