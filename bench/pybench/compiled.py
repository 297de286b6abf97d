"""What the torch.compile rows compile: each function is the whole of what a PyTorch user writes for the op, so its
lines are that implementation's lines of code (scripts/sbreport/worth.py counts them from this file). The eager
functions mirror the C++ baselines of the same name: rms_norm_composite is torch_composite (ref/torch/
torch_rmsnorm.cpp), fused_add_rms_norm is torch_eager_composite, attention_composite is torch_manual_composite
(ref/torch/torch_attention.cpp). The attention functions take the problem's constants (causal, the scale, the block
mask) from a closure, which Dynamo reads as constants. Each row compiles its own copy (fresh()) with dynamic=False:
one compiled function per shape and dtype, none recompiled for another.
"""
import types

import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import flex_attention

EPS = 1e-6  # the suite's RMSNorm epsilon (the C++ problems' default)


def rms_norm(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, EPS)


def rms_norm_composite(x, w):
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS)
    return w * h.to(x.dtype)


def fused_add_rms_norm(x, residual, w):
    residual.add_(x)
    x.copy_(F.rms_norm(residual, (x.shape[-1],), w, EPS))


def attention_composite_for(causal, scale):
    def attention_composite(q, k, v):
        group = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
        scores = torch.matmul(q, k.transpose(-2, -1)) * scale
        if causal and q.shape[2] > 1:
            keep = torch.ones(q.shape[2], k.shape[2], device=q.device, dtype=torch.bool).tril(k.shape[2] - q.shape[2])
            scores = scores.masked_fill(keep.logical_not(), float("-inf"))
        return torch.matmul(torch.softmax(scores, -1, dtype=torch.float32).to(q.dtype), v)
    return attention_composite


def flex_for(block_mask, scale):
    def flex(q, k, v):
        return flex_attention(q, k, v, block_mask=block_mask, scale=scale, enable_gqa=True)
    return flex


def fresh(fn, tag: str):
    """A copy of fn (its closure included) with a code object of its own, named fn_<tag>. Dynamo keeps its compiled
    graphs per code object, so each copy compiles once for its own shape, and its cache never holds another shape's
    graph (nor meets the recompile limit, as one function called at many shapes would)."""
    code = fn.__code__.replace(co_name=f"{fn.__name__}_{tag}")
    return types.FunctionType(code, fn.__globals__, code.co_name, fn.__defaults__, fn.__closure__)


def compile_fresh(fn, tag: str, mode: str | None = None):
    """torch.compile(fresh(fn, tag), dynamic=False, mode=mode)."""
    return torch.compile(fresh(fn, tag), dynamic=False, mode=mode)
