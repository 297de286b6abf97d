"""What one call costs: the PyTorch operator layer against a direct kernel launch. At the shapes where a call's
host side matters most (one token's RMSNorm, one request's decode attention), hot, each row's GPU time (the
timed figure, a CUDA graph's, free of host time), its host time per call (`host_us`) and the time per call of an
eager loop (`eager_us`: launches queued back to back without a graph). The op layer's own cost is the operator
row's host time over the Python launch floor's (the harness's callback around a bare kernel launch)."""
from __future__ import annotations

from .common import is_ours, usable

# (op, dtype, workload, shape label): one token's RMSNorm (Llama-3-8B) and one request's decode attention.
SHAPES = (("rmsnorm", "bf16", "", "t1_h4096"), ("attention", "bf16", "decode", "b1_hq32_hkv8_d128_q1_kv4096"))
OPERATOR = "solbench_op"
PYTHON_FLOOR = "floor/python_launch/hot"
CPP_FLOOR = "floor/empty_kernel/hot"


def _fastest(cases, keep):
    return min((c for c in cases if usable(c) and keep(c)), key=lambda c: c.median_us, default=None)


def rows_at(cases, op: str, dtype: str, workload: str, label: str) -> list:
    """(who, case) at one shape, hot: our fastest kernel launched from C++, the operator, eager PyTorch's and
    torch.compile's fastest, then the two launch floors; rows the run lacks are left out."""
    at = [c for c in cases if c.op == op and c.dtype == dtype and c.workload == workload and c.shape_label == label
          and c.mode == "hot"]
    picks = [
        ("our kernel, launched from C++", _fastest(at, lambda c: is_ours(c) and c.impl != OPERATOR)),
        ("`solbench_op` (the operator, from Python)", _fastest(at, lambda c: c.impl == OPERATOR)),
        ("eager PyTorch (from C++)", _fastest(at, lambda c: c.is_torch and not c.impl.startswith("torch_compile")
                                              and c.impl != "torch_flex_attention")),
        ("torch.compile (from Python)", _fastest(at, lambda c: c.impl.startswith("torch_compile"))),
    ]
    by_name = {c.name: c for c in cases if usable(c)}
    picks += [("launch floor, C++ (`floor/empty_kernel`)", by_name.get(CPP_FLOOR)),
              ("launch floor, Python (`floor/python_launch`)", by_name.get(PYTHON_FLOOR))]
    return [(who, c) for who, c in picks if c is not None]


def operator_cost_us(rows: list) -> float | None:
    """The op layer's host time: the operator row's host_us over the Python launch floor's."""
    op = next((c for _, c in rows if c.impl == OPERATOR), None)
    floor = next((c for _, c in rows if c.name == PYTHON_FLOOR), None)
    if op is None or floor is None or "host_us" not in op.counters or "host_us" not in floor.counters:
        return None
    return op.counters["host_us"] - floor.counters["host_us"]


def _us(case, counter: str) -> str:
    value = case.counters.get(counter)
    return f"{value:.2f}" if value is not None else "–"


def overhead_section(cases) -> list:
    """The report's section; [] for a run without the operator rows or the host counters."""
    tables = []
    for op, dtype, workload, label in SHAPES:
        rows = rows_at(cases, op, dtype, workload, label)
        if not any(c.impl == OPERATOR and "host_us" in c.counters for _, c in rows):
            continue
        direct = next((c for who, c in rows if who.startswith("our kernel")), None)
        cost = operator_cost_us(rows)
        title = f"### {op}, {dtype}, {(workload + ' ') if workload else ''}`{label}`, hot"
        tables += [title, "", "| row | implementation | GPU time (µs) | host per call (µs) "
                   "| eager loop per call (µs) | eager vs our kernel |", "|---|---|---:|---:|---:|---:|"]
        for who, c in rows:
            ratio = "–"
            if direct is not None and "eager_us" in c.counters and "eager_us" in direct.counters:
                ratio = f"{c.counters['eager_us'] / direct.counters['eager_us']:.2f}×"
            tables.append(f"| {who} | `{c.impl}` | {c.median_us:.2f} | {_us(c, 'host_us')} | {_us(c, 'eager_us')} "
                          f"| {ratio} |")
        tables += ["", f"The op layer's own host time: **{cost:.2f} µs** a call (`solbench_op`'s host time over the "
                   "Python launch floor's)." if cost is not None else "The Python launch floor did not run: no "
                   "op-layer figure.", ""]
    if not tables:
        return []
    return ["## What a call costs: the operator layer", "",
            "A PyTorch user calls `torch.ops.solbench.*` from Python: the call goes through the dispatcher, checks "
            "its inputs, allocates its output and launches the kernel. *GPU time* is the hot figure (a CUDA graph "
            "of the calls: no host time). *Host per call* (`host_us`) is the host's wall time in one call with the "
            "GPU idle; a Python row's includes the harness's ctypes callback, which the Python launch floor (that "
            "callback around a bare kernel launch, `torch.cuda._sleep(0)`) also pays. *Eager loop per call* "
            "(`eager_us`) is the time per call of calls queued back to back with no graph: what an eager model "
            "pays, the larger of the host's time and the GPU's. *eager vs our kernel*: that time over our kernel's "
            "launched from C++.", "", *tables]
