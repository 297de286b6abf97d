"""Paged decode: bench_attention's cases at paged shapes (<decode shape>_p<page>_<lengths>: a ragged batch whose K
and V sit in a paged cache). Per batch and longest length, the sweep over page sizes and length distributions
of our fastest paged kernel against three figures of the same run and shape: the bytes floor (`ref_kv_read`
reading the pages the sequences own), our contiguous kernel on the batch padded to its longest sequence
(`decode_splitk_padded`: what an engine without ragged kernels pays), and PyTorch's fastest row (SDPA with a
padding mask, FlexAttention with a block mask of each sequence's keys). An FP8 cache's rows (_fp8) stand beside
their 16-bit twin's, with our speedup over it."""
from __future__ import annotations

import re

from .common import usable

PADDED = "decode_splitk_padded"
READ_FLOOR = "ref_kv_read"
DIST_ORDER = ("eq", "unif", "zipf", "onelong")
ELEMENT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}


def is_paged(case) -> bool:
    return case.op == "attention" and "page_size" in case.shape


PAGED_TAIL = re.compile(r"_p\d+_[a-z]+(_fp8)?$")


def base_label(case) -> str:
    """The decode shape of a paged case's label: b64_hq32_hkv8_d128_q1_kv16384 of ..._p16_zipf(_fp8)."""
    return PAGED_TAIL.sub("", case.shape_label)


def padding_fraction(case) -> float | None:
    """The share of a padded batch's K and V that is padding: 1 - the sequences' own bytes over batch * kv_len
    keys' bytes (in the cache's element size)."""
    s, useful = case.shape, case.counters.get("bytes")
    if not useful or case.dtype not in ELEMENT_BYTES:
        return None
    element = 1 if s.get("kv_cache") == "fp8" else ELEMENT_BYTES[case.dtype]
    padded = 2 * s["batch"] * s["kv_len"] * s["heads_kv"] * s["head_dim"] * element
    return 1.0 - useful / padded


def sweeps(cases) -> dict:
    """(dtype, mode, base label) -> {(page size, lengths, cache): {impl: case}}, usable paged cases only; cache
    "" for the dtype's, "fp8" for an FP8 cache."""
    out = {}
    for c in cases:
        if is_paged(c) and usable(c):
            cell = out.setdefault((c.dtype, c.mode, base_label(c)), {})
            key = (c.shape["page_size"], c.shape["lengths"], c.shape.get("kv_cache", ""))
            cell.setdefault(key, {})[c.impl] = c
    return out


def ours(row: dict):
    """Our fastest paged kernel at one shape: not the padded baseline, not PyTorch, not a reference."""
    mine = [c for impl, c in row.items() if impl != PADDED and not c.is_torch and not c.is_reference
            and not c.is_triton]
    return min(mine, key=lambda c: c.median_us, default=None)


def _ratio(num, den) -> str:
    return f"{num / den:.2f}×" if num and den else "–"


def sweep_table(cells: dict) -> list:
    lines = ["| lengths | page | cache | padding | ours | µs | % of the read floor | time saved vs padded "
             "| vs PyTorch's best | vs the 16-bit cache |", "|---|---:|---|---:|---|---:|---:|---:|---:|---:|"]
    order = sorted(cells, key=lambda k: (DIST_ORDER.index(k[1]) if k[1] in DIST_ORDER else len(DIST_ORDER), k[0],
                                         k[2]))
    for page, dist, cache in order:
        row = cells[(page, dist, cache)]
        mine = ours(row)
        if mine is None:
            continue
        read, padded = row.get(READ_FLOOR), row.get(PADDED)
        torch_rows = [c for c in row.values() if c.is_torch]
        best_torch = min(torch_rows, key=lambda c: c.median_us, default=None)
        pad = padding_fraction(mine)
        pad_text = f"{100 * pad:.0f}%" if pad is not None else "–"
        floor = f"{100 * read.median_us / mine.median_us:.0f}%" if read else "–"
        saved = f"{100 * (1 - mine.median_us / padded.median_us):.0f}%" if padded else "–"
        vs_torch = _ratio(best_torch.median_us if best_torch else None, mine.median_us)
        twin = ours(cells.get((page, dist, ""), {})) if cache else None
        vs_twin = _ratio(twin.median_us if twin else None, mine.median_us)
        lines.append(f"| {dist} | {page} | {cache or mine.dtype} | {pad_text} | `{mine.impl}` | {mine.median_us:.1f} "
                     f"| {floor} | {saved} | {vs_torch} | {vs_twin} |")
    return lines


def paged_section(cases) -> list:
    """The section for the attention decode page; [] for a run without paged cases."""
    groups = sweeps(cases)
    if not groups:
        return []
    md = ["## Paged decode: page size and length distribution", "",
          "A batch of sequences of their own lengths (`eq`: every sequence the longest; `unif`: uniform up to it; "
          "`zipf`: the r-th longest 1/r of it; `onelong`: one long, the rest 1/64 of it) whose K and V sit in a "
          "paged cache (vLLM's layout, the pages of each sequence scattered over the pool). Per row: *padding*, "
          "the share of the batch padded to its longest sequence that is padding; *ours*, our fastest paged "
          "kernel, counted in the bytes of the sequences' own keys; *% of the read floor*, `ref_kv_read`'s time "
          "(a kernel that only reads the owned rows of the same pages) over ours; *time saved vs padded*, 1 - "
          "our time over `decode_splitk_padded`'s (our contiguous kernel on the padded batch: a ragged kernel "
          "should save about the padding); *vs PyTorch's best*, the fastest PyTorch row's time over ours "
          "(SDPA with a padding mask, FlexAttention with a block mask of each sequence's keys); *vs the 16-bit cache*, "
          "at an FP8 (e4m3) cache, our time on the same lengths and pages in the dtype over ours on the FP8 cache "
          "(it reads half the bytes: 2× at the read floor).", ""]
    for (dtype, mode, label), cells in groups.items():
        md += [f"### `{label}`, {dtype}, {mode}", "", *sweep_table(cells), ""]
    return md
