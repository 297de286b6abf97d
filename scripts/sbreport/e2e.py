"""bench_e2e: one decoder layer per shape, the fastest eager PyTorch layer against ours, and what the two RMSNorms
and the attention cost inside each (the layer's time less ref_rest_of_layer's, the same ops without them); and
the layer compiled (bench_torch's e2e rows): torch.compile of the stock layer against the same layer compiled
around our operators."""
from __future__ import annotations

from .common import fmt, shape_key, usable

E2E_OURS = "solbench"                # bench_e2e's layer with this suite's kernels
E2E_REST = "ref_rest_of_layer"       # the same layer without its norms and attention
# Ours in part (one of our kernels, the other PyTorch's as torch_eager runs it), against torch_eager.
E2E_PARTS = (("solbench_norms", "our RMSNorm alone"), ("solbench_attention", "our attention alone"))
# The layer compiled whole (bench_torch): the stock layer, and the layer with our operators in it.
E2E_COMPILED = (("torch_eager", "eager, PyTorch's"), (E2E_OURS, "eager, ours"),
                ("torch_compile", "compiled, PyTorch's"), ("solbench_op", "compiled, our operators"))


def cold_layers(cases) -> dict:
    """(workload, dtype, shape label) -> {impl: case}, the usable cold layer cases."""
    by_key = {}
    for c in cases:
        if c.op == "e2e" and c.mode == "cold" and usable(c):
            by_key.setdefault((c.workload, c.dtype, c.shape_label), {})[c.impl] = c
    return by_key


def e2e_rows(cases) -> dict:
    """(workload, dtype) -> table lines, one per layer shape (cold) with ours, the rest of the layer and a
    PyTorch layer."""
    rows = {}
    for (workload, dtype, label), impls in cold_layers(cases).items():
        ours, rest = impls.get(E2E_OURS), impls.get(E2E_REST)
        torch = [c for c in impls.values() if c.is_torch and not c.impl.startswith("torch_compile")]
        if ours is None or rest is None or not torch:
            continue
        best = min(torch, key=lambda c: c.median_us)
        theirs, mine = best.median_us - rest.median_us, ours.median_us - rest.median_us
        eager = impls.get("torch_eager")
        parts = [f"{eager.median_us / impls[p].median_us:.3f}×" if eager is not None and p in impls else "–"
                 for p, _ in E2E_PARTS]
        rows.setdefault((workload, dtype), []).append(
            (shape_key(ours), f"| `{label}` | `{best.impl}` {fmt(best.median_us, 'µs')} | "
             f"{fmt(ours.median_us, 'µs')} | **{best.median_us / ours.median_us:.3f}×** | "
             f"{fmt(rest.median_us, 'µs')} | {fmt(theirs, 'µs')} ({theirs / best.median_us:.0%}) | "
             f"{fmt(mine, 'µs')} ({mine / ours.median_us:.0%}) | " + " | ".join(parts) + " |"))
    return {k: [line for _, line in sorted(v)] for k, v in rows.items()}


E2E_TEXT = (
    "`bench_e2e` times one Llama-style decoder layer (RMSNorm, q/k/v projections, RoPE, the KV cache write, "
    f"attention, o projection, RMSNorm, SwiGLU MLP, two residual adds), cold. `{E2E_OURS}` computes the two "
    "RMSNorms with `vectorized` and the attention with `decode_splitk` (decode) or `wgmma_flash` (prefill; "
    "`tiled_flash` where it cannot run); the PyTorch layers use `at::rms_norm` and SDPA (`torch_eager`: SDPA's "
    f"own choice of backend); everything else is the same PyTorch ops. `{E2E_REST}` runs the layer without its "
    "norms and attention, so each layer's time less its time is what those cost inside the layer (with the "
    f"launch gaps between them). {' and '.join(f'`{p}`' for p, _ in E2E_PARTS)} swap in one of our kernels "
    "only (the other as `torch_eager` runs it): their columns give `torch_eager`'s time over theirs. Every "
    "layer is checked against the same layer in fp32 with fp64 attention before it is timed.")


def compiled_rows(cases) -> dict:
    """(workload, dtype) -> table lines, one per layer shape (cold) with both compiled layers: each of
    E2E_COMPILED's times, and the compiled stock layer's time over the compiled layer with our operators."""
    rows = {}
    for (workload, dtype, label), impls in cold_layers(cases).items():
        stock, ours = impls.get("torch_compile"), impls.get("solbench_op")
        if stock is None or ours is None:
            continue
        cells = [fmt(impls[i].median_us, "µs") if i in impls else "–" for i, _ in E2E_COMPILED]
        speedup = f" | **{stock.median_us / ours.median_us:.3f}×** |"
        rows.setdefault((workload, dtype), []).append((shape_key(ours), f"| `{label}` | " + " | ".join(cells) + speedup))
    return {k: [line for _, line in sorted(v)] for k, v in rows.items()}


def compiled_section(rows: dict) -> list:
    if not rows:
        return []
    md = ["## The decoder layer compiled", "",
          "`bench_torch`'s layer rows compile the same layer whole with `torch.compile`: `torch_compile` the stock "
          "layer (`F.rms_norm`, SDPA), `solbench_op` the layer with `solbench.rms_norm` and `solbench.attention` "
          "in it (inductor compiles the rest around our operators). Beside them, `bench_e2e`'s eager layers. The "
          "last column is the compiled stock layer's time over the compiled layer with our operators. Cold.", ""]
    for (workload, dtype), lines in rows.items():
        md += [f"### e2e compiled · {workload} · {dtype} · cold", "",
               "| shape | " + " | ".join(what for _, what in E2E_COMPILED) + " | speedup, compiled |",
               "|---|" + "---:|" * (len(E2E_COMPILED) + 1), *lines, ""]
    return md


def e2e_section(rows: dict) -> list:
    """The section for the (workload, dtype) tables given (e2e_rows' output, or a part of it)."""
    if not rows:
        return []
    md = ["## One decoder layer: the norms and the attention inside it", "", E2E_TEXT, ""]
    for (workload, dtype), lines in rows.items():
        md += [f"### e2e · {workload} · {dtype} · cold", "",
               "| shape | fastest PyTorch layer | ours | speedup | rest of the layer | norms + attention, "
               "PyTorch (share) | norms + attention, ours (share) | "
               + " | ".join(f"speedup, {what}" for _, what in E2E_PARTS) + " |",
               "|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(E2E_PARTS), *lines, ""]
    return md
