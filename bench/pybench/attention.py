"""The Python rows of attention: implementation -> build(inputs, keep, tag) -> Built (rmsnorm.py says what keep
and tag are). The inputs are the C++ cases' (bench/attention_case.h): Q, K, V ~ N(0, 1) in BSHD memory, passed
as their [batch, heads, seq, head_dim] transposes, the layout SDPA takes and the C++ PyTorch baselines pass;
scale 1 / sqrt(head_dim); causal masking bottom-right aligned when q_len != kv_len.
"""
from __future__ import annotations

import torch

from . import compiled, rows
from .rows import Built, Unsupported, generator, kept, nbytes, normal, poison, seed_of, solbench
from .verify import Check, check_attention


class Inputs:
    def __init__(self, shape: dict, dtype: torch.dtype, seed: int):
        b, hq, hkv, d = shape["batch"], shape["heads_q"], shape["heads_kv"], shape["head_dim"]
        self.q_len, self.kv_len, self.causal = shape["q_len"], shape["kv_len"], bool(shape.get("causal"))
        self.scale = d ** -0.5
        g = generator(seed)
        self.q = normal((b, self.q_len, hq, d), dtype, g).transpose(1, 2)
        self.k = normal((b, self.kv_len, hkv, d), dtype, g).transpose(1, 2)
        self.v = normal((b, self.kv_len, hkv, d), dtype, g).transpose(1, 2)


def _row(call, compiled_row: bool = False):
    """A row: `call(inputs, keep, tag)` returns the launch, whose result is O; checked on the allocator's
    NaN-filled memory."""
    def build(inp: Inputs, keep: dict, tag: str) -> Built:
        launch = call(inp, keep, tag)
        out_bytes = nbytes(inp.q.shape, inp.q.dtype)

        def check() -> Check:
            poison(out_bytes)
            return check_attention(inp.q, inp.k, inp.v, launch(), inp.causal, inp.scale)
        return Built(launch, check, compiled=compiled_row)
    return build


def _composite(inp, keep, tag):
    """torch.compile of the manual composite (torch_manual_composite's code), refused where that row refuses."""
    if inp.causal and inp.q_len > inp.kv_len:
        raise Unsupported("causal with q_len > kv_len leaves query rows that see no key, and softmax over an all "
                          "-inf row is NaN, not 0")
    f = kept(keep, "fn", lambda: compiled.compile_fresh(compiled.attention_composite_for(inp.causal, inp.scale), tag))
    return lambda: f(inp.q, inp.k, inp.v)


def block_mask_of(q_len: int, kv_len: int, causal: bool):
    """FlexAttention's block mask of a problem: bottom-right causal (query i sees keys up to i + kv_len - q_len);
    None where nothing is masked (no causal mask, or one query row, which sees every key)."""
    if not causal or q_len == 1:
        return None
    from torch.nn.attention.flex_attention import create_block_mask
    offset = kv_len - q_len

    def bottom_right_causal(b, h, q_idx, kv_idx):
        return q_idx + offset >= kv_idx
    return create_block_mask(bottom_right_causal, None, None, q_len, kv_len, device=rows.DEVICE)


def _flex(inp, keep, tag):
    """torch.compile of flex_attention with the problem's block mask (GQA native: enable_gqa)."""
    def make():
        return compiled.compile_fresh(compiled.flex_for(block_mask_of(inp.q_len, inp.kv_len, inp.causal),
                                                        inp.scale), tag)
    f = kept(keep, "fn", make)
    return lambda: f(inp.q, inp.k, inp.v)


def _op(inp, keep, tag):
    attention = solbench().attention
    return lambda: attention(inp.q, inp.k, inp.v, causal=inp.causal)


IMPLS = {"attention": {
    "torch_compile_composite": _row(_composite, compiled_row=True),
    "torch_flex_attention": _row(_flex, compiled_row=True),
    "solbench_op": _row(_op),
}}


def inputs(op: str, shape: dict, dtype: torch.dtype, name: str) -> Inputs:
    return Inputs(shape, dtype, seed_of(name))
