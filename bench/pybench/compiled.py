"""What the torch.compile rows compile: each function is the whole of what a PyTorch user writes for the op, so its
lines are that implementation's lines of code (scripts/sbreport/worth.py counts them from this file). The eager
functions mirror the C++ baselines of the same name: rms_norm_composite is torch_composite (ref/torch/
torch_rmsnorm.cpp), fused_add_rms_norm is torch_eager_composite, attention_composite is torch_manual_composite
(ref/torch/torch_attention.cpp); decoder_layer is bench/layer.h's layer. The attention functions take the
problem's constants (causal, the scale, the block mask) from a closure, which Dynamo reads as constants. Each row
compiles its own copy (fresh()) with dynamic=False: one compiled function per shape and dtype, none recompiled for
another.
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


def rope(x, cos, sin):
    """Hugging Face's apply_rotary_pos_emb on [batch, seq, heads, head_dim] x, cos and sin [1, seq, 1, head_dim]."""
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), -1) * sin


def decoder_layer_for(causal, norm, attention):
    """bench/layer.h's Llama-style decoder layer (Hugging Face's LlamaDecoderLayer, inference) with the norms and the
    attention given: norm(x, weight), attention(q, k, v, causal) on [batch, heads, seq, head_dim] views. The new
    tokens' K and V go into the caches' last q_len positions, which the attention then reads."""
    def decoder_layer(x, w, k_cache, v_cache, cos, sin):
        wq, wk, wv, wo, wg, wu, wd, ln1, ln2 = w
        b, n, _ = x.shape
        heads_kv, d = k_cache.shape[2], k_cache.shape[3]
        heads_q, start = wq.shape[0] // d, k_cache.shape[1] - n
        h = norm(x, ln1)
        q = rope(F.linear(h, wq).view(b, n, heads_q, d), cos, sin)
        k_cache[:, start:] = rope(F.linear(h, wk).view(b, n, heads_kv, d), cos, sin)
        v_cache[:, start:] = F.linear(h, wv).view(b, n, heads_kv, d)
        a = attention(q.transpose(1, 2), k_cache.transpose(1, 2), v_cache.transpose(1, 2), causal)
        x1 = x + F.linear(a.transpose(1, 2).reshape(b, n, heads_q * d), wo)
        h2 = norm(x1, ln2)
        return x1 + F.linear(F.silu(F.linear(h2, wg)) * F.linear(h2, wu), wd)
    return decoder_layer


def sdpa(q, k, v, causal):
    """The stock layer's attention: SDPA's own choice of backend (q_len == kv_len where causal)."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)


def fresh(fn, tag: str):
    """A copy of fn (its closure included) with a code object of its own, named fn_<tag>. Dynamo keeps its compiled
    graphs per code object, so each copy compiles once for its own shape, and its cache never holds another shape's
    graph (nor meets the recompile limit, as one function called at many shapes would)."""
    code = fn.__code__.replace(co_name=f"{fn.__name__}_{tag}")
    return types.FunctionType(code, fn.__globals__, code.co_name, fn.__defaults__, fn.__closure__)


def compile_fresh(fn, tag: str, mode: str | None = None):
    """torch.compile(fresh(fn, tag), dynamic=False, mode=mode)."""
    return torch.compile(fresh(fn, tag), dynamic=False, mode=mode)
