"""The Python rows of the decoder layer: bench_e2e's cases (bench/layer.h), the same layer (compiled.py's
decoder_layer: RMSNorm, projections, RoPE at theta 500000, the new tokens' K and V written into the cache, GQA
attention, causal at prefill, the output projection and residual, RMSNorm, SwiGLU MLP and residual) compiled whole:
- torch_compile: torch.compile of the stock layer (F.rms_norm, SDPA with its own choice of backend);
- solbench_op: torch.compile of the layer with solbench.rms_norm and solbench.attention in it (the operators stay
  calls of their own; inductor compiles the rest around them).
The inputs as bench/layer.h draws them (another generator: other numbers): weights N(0, 1 / fan_in), the RMSNorm
weights 1 + N(0, 0.1^2), x and the KV cache N(0, 1). The check is bench/layer.h's: err = max |out - ref32| /
(2 max |ref_same - ref32| + 1e-5), ref32 the layer in fp32 with attention in fp64, ref_same the layer in the dtype
with attention computed in the dtype as PyTorch's composite rounds it; a NaN fails. fp16 and bf16 only, as
bench_e2e (the tolerance is a 16-bit layer's).
"""
from __future__ import annotations

import math

import torch

from . import compiled, rows
from .rows import Built, Unsupported, generator, kept, nbytes, normal, poison, seed_of, solbench
from .verify import Check

ROPE_THETA = 500000.0  # Llama 3's rope_theta (bench/layer.cpp's kRopeTheta)


class Inputs:
    def __init__(self, shape: dict, dtype: torch.dtype, seed: int):
        if dtype == torch.float32:
            raise Unsupported("the layer runs fp16 and bf16 (its tolerance is a 16-bit layer's), as bench_e2e")
        hidden, heads_q, heads_kv, d = shape["hidden"], shape["heads_q"], shape["heads_kv"], shape["head_dim"]
        ffn, b, n, kv = shape["ffn"], shape["batch"], shape["q_len"], shape["kv_len"]
        self.causal, self.dtype = n > 1, dtype
        g = generator(seed)

        def linear(out, fan_in):
            return normal((out, fan_in), dtype, g, std=1.0 / math.sqrt(fan_in))
        self.w = (linear(heads_q * d, hidden), linear(heads_kv * d, hidden), linear(heads_kv * d, hidden),
                  linear(hidden, heads_q * d), linear(ffn, hidden), linear(ffn, hidden), linear(hidden, ffn),
                  normal((hidden,), dtype, g, mean=1.0, std=0.1), normal((hidden,), dtype, g, mean=1.0, std=0.1))
        self.x = normal((b, n, hidden), dtype, g)
        self.k_cache = normal((b, kv, heads_kv, d), dtype, g)
        self.v_cache = normal((b, kv, heads_kv, d), dtype, g)
        inv_freq = ROPE_THETA ** (-torch.arange(0, d, 2, device=rows.DEVICE, dtype=torch.float32) / d)
        freqs = torch.outer(torch.arange(kv - n, kv, device=rows.DEVICE, dtype=torch.float32), inv_freq)
        emb = torch.cat((freqs, freqs), -1).view(1, n, 1, d)
        self.cos32, self.sin32 = emb.cos(), emb.sin()
        self.cos, self.sin = self.cos32.to(dtype), self.sin32.to(dtype)
        self._references = None

    def call(self, layer):
        return layer(self.x, self.w, self.k_cache, self.v_cache, self.cos, self.sin)

    def references(self):
        """(ref32, ref_same), computed once: on copies of the caches (the layer writes the new tokens into them)."""
        if self._references is None:
            f32 = tuple(t.float() for t in self.w)
            ref32 = compiled.decoder_layer_for(self.causal, compiled.rms_norm, attention_in(torch.float64))(
                self.x.float(), f32, self.k_cache.float(), self.v_cache.float(), self.cos32, self.sin32)
            same = compiled.decoder_layer_for(self.causal, compiled.rms_norm, attention_in(self.dtype))(
                self.x, self.w, self.k_cache.clone(), self.v_cache.clone(), self.cos, self.sin)
            self._references = (ref32, same.float())
        return self._references


def attention_in(dtype: torch.dtype):
    """Attention a (batch, q head) at a time, so that a long prompt's scores fit: in fp64 (the reference), or in a
    16-bit dtype as PyTorch's composite rounds it (Q K^T rounded, scaled in fp32 and rounded, softmax in fp32 and
    rounded, P V accumulated in fp32 and rounded): the same-dtype twin whose error sets the tolerance."""
    def attention(q, k, v, causal):
        b, heads_q, n, d = q.shape
        group, kv = heads_q // k.shape[1], k.shape[2]
        out = torch.empty(b, heads_q, n, d, dtype=q.dtype if dtype != torch.float64 else torch.float64,
                          device=q.device)
        keep = torch.ones(n, kv, dtype=torch.bool, device=q.device).tril(kv - n) if causal else None
        for i in range(b):
            for h in range(heads_q):
                qh, kh, vh = q[i, h].to(dtype), k[i, h // group].to(dtype), v[i, h // group].to(dtype)
                if dtype == torch.float64:
                    s = (qh @ kh.T) / math.sqrt(d)
                    if keep is not None:
                        s = s.masked_fill(~keep, -math.inf)
                    out[i, h] = torch.softmax(s, -1) @ vh
                else:
                    s = ((qh @ kh.T).float() * (1 / math.sqrt(d))).to(dtype)
                    if keep is not None:
                        s = s.masked_fill(~keep, -math.inf)
                    p = torch.softmax(s.float(), -1).to(dtype)
                    out[i, h] = (p.float() @ vh.float()).to(dtype)
        return out.to(torch.float32) if dtype == torch.float64 else out
    return attention


def check_layer(inp: Inputs, out: torch.Tensor) -> Check:
    """bench/layer.h's LayerCheck over every element of the output."""
    ref32, same = inp.references()
    got = out.float()
    if not bool(torch.isfinite(got).all()):
        return Check(False, math.inf, f"{int((~torch.isfinite(got)).sum())} output element(s) are NaN/Inf")
    err, tolerance = float((got - ref32).abs().max()), 2.0 * float((same - ref32).abs().max()) + 1e-5
    c = Check(err <= tolerance, err / tolerance, "")
    if not c.ok:
        c.message = f"max |out - ref32| {err:.3g} > 2 max |ref_same - ref32| + 1e-5 = {tolerance:.3g}"
    return c


def _row(norm_attention):
    """A compiled layer with the norm and attention norm_attention() gives."""
    def build(inp: Inputs, keep: dict, tag: str) -> Built:
        norm, attention = norm_attention()
        layer = kept(keep, "fn", lambda: compiled.compile_fresh(compiled.decoder_layer_for(inp.causal, norm, attention),
                                                                 tag))
        out_bytes = nbytes(inp.x.shape, inp.x.dtype)

        def check() -> Check:
            poison(out_bytes)
            return check_layer(inp, inp.call(layer))
        return Built(lambda: inp.call(layer), check, compiled=True)
    return build


def _stock():
    return compiled.rms_norm, compiled.sdpa


def _ours():
    package = solbench()

    def norm(x, w):
        return package.rms_norm(x, w, compiled.EPS)

    def attention(q, k, v, causal):
        return package.attention(q, k, v, causal=causal)
    return norm, attention


IMPLS = {"e2e": {
    "torch_compile": _row(_stock),
    "solbench_op": _row(_ours),
}}


def inputs(op: str, shape: dict, dtype: torch.dtype, name: str) -> Inputs:
    return Inputs(shape, dtype, seed_of(name))
