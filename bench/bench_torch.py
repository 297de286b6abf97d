#!/usr/bin/env python3
"""bench_torch: the suite's PyTorch-side rows (torch.compile, Triton, FlexAttention, the solbench operators), timed
by the C++ harness and written as Google Benchmark JSON with the suite's case names. `--help` says more; the code
is bench/pybench/ (its __init__ lists the parts) and bench/pybench_capi.cpp.

    bench/bench_torch.py --shapes=anchors --dtypes=bf16 --benchmark_repetitions=5 \\
        --benchmark_out=run.json --benchmark_out_format=json
"""
import sys

from pybench.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv))
