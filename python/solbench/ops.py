"""Loads the operator library and wraps its ops.

libsolbench_ops.so is the first of:
  1. $SOLBENCH_OPS_LIB (a path to the library);
  2. the copy inside this package (solbench/libsolbench_ops.so, which `pip install ./python` puts there);
  3. the build tree of the checkout this package sits in: build/release/python/libsolbench_ops.so.
Where the ops are already registered (a torch.utils.cpp_extension build loaded first), nothing is loaded.
"""
import os
import pathlib

import torch

LIBRARY_NAME = "libsolbench_ops.so"
_PACKAGE = pathlib.Path(__file__).resolve().parent
_CHECKOUT_BUILD = _PACKAGE.parents[1] / "build" / "release" / "python" / LIBRARY_NAME
BUILD_HINT = ("`pip install --no-build-isolation ./python` in the checkout builds it and installs it in the package; "
              "or build it with `cmake --preset release && cmake --build --preset release --target solbench_ops` "
              "(it lands in build/release/python/) and point SOLBENCH_OPS_LIB at it")


def _candidates():
    env = os.environ.get("SOLBENCH_OPS_LIB")
    if env:
        return [pathlib.Path(env)]  # an explicit path is the only one tried: a typo must not load another build
    return [_PACKAGE / LIBRARY_NAME, _CHECKOUT_BUILD]


_OPS = ("rms_norm", "rms_norm_backward", "fused_add_rms_norm", "attention", "paged_attention")


def _registered():
    return all(hasattr(torch.ops.solbench, op) for op in _OPS)


def _load():
    """The path loaded ("" when the ops were already registered); ImportError saying how to build it."""
    if _registered():
        return ""
    tried = _candidates()
    for path in tried:
        if path.is_file():
            torch.ops.load_library(str(path))
            return str(path)
    raise ImportError(f"solbench: the operator library {LIBRARY_NAME} is not built (looked for "
                      f"{', '.join(map(str, tried))}); {BUILD_HINT}")


library_path = _load()
from . import _fake  # noqa: E402  (the fakes register against the schemas just loaded)
from . import _autograd  # noqa: E402  (rms_norm's backward, likewise)

_VARIANTS = {"rmsnorm": "rmsnorm_variants", "rmsnorm_backward": "rmsnorm_backward_variants",
             "fused_add_rmsnorm": "fused_add_rmsnorm_variants", "attention": "attention_variants",
             "paged_attention": "paged_attention_variants"}


def rms_norm(x, weight, eps=1e-6, variant="auto"):
    """torch.nn.functional.rms_norm(x, [hidden], weight, eps) by a solbench kernel: x [..., hidden] and weight
    [hidden], contiguous CUDA tensors of one dtype (fp32, fp16, bf16). variant: a name from
    variants("rmsnorm"), or "auto" for the best kernel for the shape. Differentiable in x and weight: the
    backward runs solbench::rms_norm_backward's "auto" variant."""
    return torch.ops.solbench.rms_norm(x, weight, eps, variant)


def rms_norm_backward(dy, x, weight, eps=1e-6, variant="auto"):
    """(dx, dw), the gradients of rms_norm(x, weight, eps) for the output's gradient dy: dy and x [..., hidden],
    weight [hidden], contiguous CUDA tensors of one dtype. rstd is recomputed from x; dw is the same bits on
    every call. variant: a name from variants("rmsnorm_backward"), or "auto"."""
    return torch.ops.solbench.rms_norm_backward(dy, x, weight, eps, variant)


def fused_add_rms_norm(x, residual, weight, eps=1e-6, variant="auto"):
    """vLLM's fused_add_rms_norm, in place: residual += x (rounded to the dtype), then
    x = rms_norm(residual, weight, eps). x and residual [..., hidden] of one shape and weight [hidden]:
    contiguous CUDA tensors of one dtype, x and residual distinct buffers. Returns None. No backward: with
    grad mode on, inputs that require grad are refused (RuntimeError). variant: a name from
    variants("fused_add_rmsnorm"), or "auto"."""
    torch.ops.solbench.fused_add_rms_norm(x, residual, weight, eps, variant)


def attention(q, k, v, causal=False, scale=None, variant="auto", *, block_table=None, seq_lens=None,
              seq_lens_cpu=None, k_scale=1.0, v_scale=1.0):
    """scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=True) by a solbench
    kernel: q [batch, heads_q, q_len, head_dim], k and v [batch, heads_kv, kv_len, head_dim] on CUDA, one dtype,
    heads_kv dividing heads_q. causal is bottom-right aligned when q_len != kv_len (SDPA's is top-left).
    variant: a name from variants("attention"), or "auto" for the best kernel for the shape (decode or prefill).

    With block_table, decode over a paged KV cache (solbench::paged_attention): k and v are the page pools
    [num_pages, page_size, heads_kv, head_dim] (vLLM's layout, contiguous), block_table [batch, max_pages] and
    seq_lens [batch] int32 CUDA tensors (sequence b's token t is row t % page_size of page
    block_table[b][t // page_size]; it has seq_lens[b] keys), q_len at most 8. seq_lens_cpu, the same lengths
    in a CPU int32 tensor, spares the op a copy to the host that waits for the stream. The pools may be an FP8
    cache (torch.float8_e4m3fn, vLLM's kv_cache_dtype="fp8"): its values times k_scale and v_scale (per
    tensor) are K and V; q stays fp16 or bf16. variant: a name from variants("paged_attention"), or "auto"."""
    if block_table is None:
        if seq_lens is not None or seq_lens_cpu is not None or k_scale != 1.0 or v_scale != 1.0:
            raise ValueError("solbench.attention: seq_lens, seq_lens_cpu, k_scale and v_scale describe a paged cache; "
                             "pass block_table with them")
        return torch.ops.solbench.attention(q, k, v, causal, scale, variant)
    if seq_lens is None:
        raise ValueError("solbench.attention: a paged cache (block_table) needs seq_lens, each sequence's length")
    return torch.ops.solbench.paged_attention(q, k, v, block_table, seq_lens, seq_lens_cpu, causal, scale, k_scale,
                                              v_scale, variant)


def variants(op):
    """The variant names of an op ("rmsnorm", "rmsnorm_backward", "fused_add_rmsnorm", "attention" or
    "paged_attention"), in its registry's (teaching) order."""
    if op not in _VARIANTS:
        raise ValueError(f"solbench.variants: unknown op {op!r} (known: {', '.join(_VARIANTS)})")
    return list(getattr(torch.ops.solbench, _VARIANTS[op])())
