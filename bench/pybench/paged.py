"""The Python rows of paged decode: bench_attention's cases at paged shapes (bench/paged_shapes.h), a batch of
sequences of their own lengths. The inputs, as bench/paged_case.h builds them: Q ~ N(0, 1) [batch, q_len,
heads_q, head_dim] passed as its SDPA-layout transpose, and each sequence's K and V ~ N(0, 1), here kept as the
batch padded to its longest sequence (zeros past each sequence) for the rows that take a padded batch, and, for
the solbench operator, scattered over vLLM's page pools through a block table. scale 1 / sqrt(head_dim); causal
masking (q_len > 1) bottom-right aligned per sequence. Every row is checked sequence by sequence against that
sequence's own keys (verify.py's check_attention), and counted in the bytes and FLOPs of those keys.
At an FP8 shape (_fp8) K and V are rounded through e4m3 at bench/paged_case.h's power-of-two scales (the
padded batch holds the values the cache holds), the pools hold the e4m3 bytes, and only solbench_op runs:
PyTorch's SDPA and FlexAttention read no FP8 cache.

The rows:
- torch_sdpa_masked: SDPA over the padded batch with a boolean mask of each sequence's keys (what PyTorch
  offers a ragged batch: its memory-efficient backend, or math, reads the padded K and V);
- torch_flex_attention: torch.compile of flex_attention over the padded batch, its block mask built from each
  sequence's length, so the blocks past a sequence are skipped: a ragged batch at the cost of its own keys;
- solbench_op: solbench.attention over the page pools with block_table, seq_lens and their host copy.
"""
from __future__ import annotations

import torch

from . import compiled, rows
from .rows import Built, Unsupported, generator, kept, nbytes, normal, poison, seed_of, solbench
from .verify import Check, check_attention


FP8_K_SCALE, FP8_V_SCALE = 2.0 ** -6, 2.0 ** -5  # bench/paged_case.h's kFp8KScale, kFp8VScale


class Inputs:
    def __init__(self, shape: dict, lengths: list, dtype: torch.dtype, seed: int):
        if len(lengths) != shape["batch"] or max(lengths) != shape["kv_len"]:
            raise ValueError(f"paged inputs: {len(lengths)} lengths up to {max(lengths)} for a batch of "
                             f"{shape['batch']} up to {shape['kv_len']}")
        b, hq, hkv, d = shape["batch"], shape["heads_q"], shape["heads_kv"], shape["head_dim"]
        self.q_len, self.kv_len, self.causal = shape["q_len"], shape["kv_len"], bool(shape.get("causal"))
        self.page_size, self.lengths, self.scale = shape["page_size"], list(lengths), d ** -0.5
        g = generator(seed)
        self.q = normal((b, self.q_len, hq, d), dtype, g).transpose(1, 2)
        lens = torch.tensor(lengths, device=rows.DEVICE)
        owned = torch.arange(self.kv_len, device=rows.DEVICE)[None, :] < lens[:, None]
        k = normal((b, self.kv_len, hkv, d), dtype, g) * owned[:, :, None, None]
        v = normal((b, self.kv_len, hkv, d), dtype, g) * owned[:, :, None, None]
        self.fp8 = shape.get("kv_cache") == "fp8"
        if self.fp8:  # the values an e4m3 cache holds (exact in the dtype: power-of-two scales)
            k = (k / FP8_K_SCALE).to(torch.float8_e4m3fn).to(dtype) * FP8_K_SCALE
            v = (v / FP8_V_SCALE).to(torch.float8_e4m3fn).to(dtype) * FP8_V_SCALE
        self.k, self.v = k.transpose(1, 2), v.transpose(1, 2)  # [batch, heads_kv, kv_len, head_dim], zero padded
        self.owned = owned                                     # [batch, kv_len]: key j is sequence b's own
        self.seq_lens = torch.tensor(lengths, dtype=torch.int32, device=rows.DEVICE)
        self.seq_lens_cpu = torch.tensor(lengths, dtype=torch.int32)

    def pages(self):
        """(k_pages, v_pages, block_table): the padded batch's own keys in pools [num_pages, page_size, heads_kv,
        head_dim] (an FP8 shape's: their e4m3 bytes, float8_e4m3fn), every sequence's pages scattered over the
        pool in the order of a generator seeded by the shape, the table -1 past a sequence."""
        p, batch = self.page_size, len(self.lengths)
        pages_of = [-(-n // p) for n in self.lengths]
        num_pages, max_pages = sum(pages_of), max(pages_of)
        order = torch.randperm(num_pages, generator=torch.Generator().manual_seed(num_pages * p + batch))
        table = torch.full((batch, max_pages), -1, dtype=torch.int32)
        table[torch.arange(max_pages)[None, :] < torch.tensor(pages_of)[:, None]] = order.to(torch.int32)
        table = table.to(rows.DEVICE)
        # Token t of sequence b: row (table[b][t // p]) * p + t % p of the pools seen as [num_pages * p, ...].
        t = torch.arange(self.kv_len, device=rows.DEVICE)
        dest = (table[:, t // p].long() * p + t % p)[self.owned]
        shape = (num_pages * p, self.k.shape[1], self.k.shape[3])
        pools = []
        for x, fp8_scale in ((self.k, FP8_K_SCALE), (self.v, FP8_V_SCALE)):
            owned = x.transpose(1, 2)[self.owned]
            if self.fp8:  # exact: the values are e4m3's times the scale
                owned = (owned / fp8_scale).to(torch.float8_e4m3fn).view(torch.uint8)
            pool = torch.zeros(shape, dtype=owned.dtype, device=rows.DEVICE)
            pool[dest] = owned
            pool = pool.view(num_pages, p, *shape[1:])
            pools.append(pool.view(torch.float8_e4m3fn) if self.fp8 else pool)
        return pools[0], pools[1], table


def check_each_sequence(inp: Inputs, o: torch.Tensor) -> Check:
    """check_attention of each sequence's rows of O against its own K and V; the worst error, the first failure."""
    worst = Check()
    for b, n in enumerate(inp.lengths):
        c = check_attention(inp.q[b:b + 1], inp.k[b:b + 1, :, :n], inp.v[b:b + 1, :, :n], o[b:b + 1], inp.causal,
                            inp.scale)
        if not c.ok:
            return Check(False, c.err, f"sequence {b} of {n} keys: {c.message}")
        worst.err = max(worst.err, c.err)
    return worst


def _row(call, compiled_row: bool = False):
    def build(inp: Inputs, keep: dict, tag: str) -> Built:
        launch = call(inp, keep, tag)
        out_bytes = nbytes(inp.q.shape, inp.q.dtype)

        def check() -> Check:
            poison(out_bytes)
            return check_each_sequence(inp, launch())
        return Built(launch, check, compiled=compiled_row)
    return build


def key_mask(inp: Inputs) -> torch.Tensor:
    """[batch, 1, q_len, kv_len], True where query row i of sequence b sees key j: j < its length and, causal,
    j <= i + length - q_len."""
    lens = inp.seq_lens.long()[:, None, None, None]
    i = torch.arange(inp.q_len, device=rows.DEVICE)[:, None]
    j = torch.arange(inp.kv_len, device=rows.DEVICE)[None, :]
    seen = j < lens
    if inp.causal:
        seen = seen & (j <= i + lens - inp.q_len)
    return seen


def refuse_fp8(inp: Inputs, who: str) -> None:
    if inp.fp8:
        raise Unsupported(f"{who} reads no FP8 cache")


def _sdpa(inp, keep, tag):
    refuse_fp8(inp, "PyTorch's SDPA")
    if inp.causal and min(inp.lengths) < inp.q_len:
        raise Unsupported("a sequence shorter than q_len leaves causal query rows that see no key, and SDPA's "
                          "softmax over an all-masked row is NaN, not 0")
    mask = key_mask(inp)
    f = torch.nn.functional.scaled_dot_product_attention
    return lambda: f(inp.q, inp.k, inp.v, attn_mask=mask, scale=inp.scale, enable_gqa=True)


def block_mask_of(inp: Inputs):
    """FlexAttention's block mask of the batch: each sequence's own keys, bottom-right causal when q_len > 1."""
    from torch.nn.attention.flex_attention import create_block_mask
    lens, q_len, causal = inp.seq_lens, inp.q_len, inp.causal

    def own_keys(b, h, q_idx, kv_idx):
        seen = kv_idx < lens[b]
        if causal:
            seen = seen & (kv_idx <= q_idx + lens[b] - q_len)
        return seen
    return create_block_mask(own_keys, len(inp.lengths), None, q_len, inp.kv_len, device=rows.DEVICE)


def _flex(inp, keep, tag):
    refuse_fp8(inp, "FlexAttention")
    # The block mask depends on the lengths alone, which are the shape's: it is kept with the compiled function
    # (its first inputs' seq_lens with it), so rebuilt inputs of the shape reuse both.
    f = kept(keep, "fn", lambda: compiled.compile_fresh(compiled.flex_for(block_mask_of(inp), inp.scale), tag))
    return lambda: f(inp.q, inp.k, inp.v)


def _op(inp, keep, tag):
    attention = solbench().attention
    k_pages, v_pages, table = inp.pages()
    scales = {"k_scale": FP8_K_SCALE, "v_scale": FP8_V_SCALE} if inp.fp8 else {}
    return lambda: attention(inp.q, k_pages, v_pages, causal=inp.causal, block_table=table, seq_lens=inp.seq_lens,
                             seq_lens_cpu=inp.seq_lens_cpu, **scales)


IMPLS = {"paged_attention": {
    "torch_sdpa_masked": _row(_sdpa),
    "torch_flex_attention": _row(_flex, compiled_row=True),
    "solbench_op": _row(_op),
}}


def inputs(op: str, shape: dict, dtype: torch.dtype, name: str) -> Inputs:
    """shape: the case name's fields with "lengths" the batch's lengths (the harness's, cases.py)."""
    return Inputs(shape, shape["lengths"], dtype, seed_of(name))
