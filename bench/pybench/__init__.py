"""bench_torch's Python side (bench/bench_torch.py is the command): PyTorch-side implementations timed by the C++
harness, through libsolbench_pybench.so.

    cli       the command line: its own flag, the library, the implementations, bench_main
    capi      the ctypes binding of libsolbench_pybench.so
    impls     the implementations of each op (plain Python: the scripts read it)
    cases     the setup and launch callbacks: inputs, rows, verification, counters, errors as return codes
    rows      what the rows share: Built, Unsupported, the allocator's NaN, the solbench and Triton loaders
    rmsnorm   the rows of rmsnorm, fused_add_rmsnorm and rmsnorm_backward
    attention the rows of attention
    paged     the rows of attention at paged shapes (a ragged batch, a paged KV cache)
    layer     the rows of the decoder layer (bench_e2e's): the stock layer compiled, and with our operators
    compiled  what the torch.compile rows compile (a PyTorch user's whole implementation of each op)
    verify    the suite's verification rules, in torch (no GPU needed)
"""
