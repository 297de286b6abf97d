#!/usr/bin/env python3
"""Experiment: where does the harness-vs-do_bench offset at ~10 us come from?

Times one PyTorch op (torch.rms_norm, bf16) with CUDA events in four protocols that differ in one
factor each from the harness (L2-sized flush, synchronize after every iteration) and from triton's
do_bench (256 MB flush, iterations queued back to back, synchronize at the end):

    flush   60 MiB (L2) or 256 MB        sync    after every iteration, or once at the end

plus do_bench itself, interleaved, several rounds, median of each. Prints a table and writes JSON.

    python3 scripts/timing_probe.py [-o probe.json] [--shapes 2048x2048,1024x4096,4096x4096]
"""
import argparse
import json
import statistics
import sys


def timed(torch, fn, flush, iters, sync_each):
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    times = []
    for i in range(iters):
        flush.zero_()
        starts[i].record()
        fn()
        ends[i].record()
        if sync_each:
            ends[i].synchronize()
    torch.cuda.synchronize()
    times = [1e3 * s.elapsed_time(e) for s, e in zip(starts, ends)]
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out")
    ap.add_argument("--shapes", default="2048x2048,1024x4096,4096x4096,16384x4096")
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    import torch
    import triton.testing

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flushes = {"L2": torch.empty(l2 // 4, dtype=torch.int32, device="cuda"),
               "256MB": torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")}
    stream = torch.cuda.Stream()
    rows = []
    for shape in a.shapes.split(","):
        r, h = (int(v) for v in shape.split("x"))
        x = torch.randn(r, h, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(h, device="cuda", dtype=torch.bfloat16)
        fn = lambda: torch.rms_norm(x, (h,), w, 1e-6)
        res = {}
        with torch.cuda.stream(stream):
            for _ in range(3):
                fn()
            for _ in range(a.rounds):
                for fname, buf in flushes.items():
                    for sync_each in (True, False):
                        key = f"flush={fname},sync={'each' if sync_each else 'end'}"
                        res.setdefault(key, []).append(timed(torch, fn, buf, a.iters, sync_each))
                res.setdefault("do_bench", []).append(
                    1e3 * triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median"))
        row = {"shape": shape, **{k: statistics.median(v) for k, v in res.items()},
               "spread": {k: [min(v), max(v)] for k, v in res.items()}}
        rows.append(row)
        print(shape, "  ".join(f"{k} {statistics.median(v):.2f}" for k, v in res.items()), flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
