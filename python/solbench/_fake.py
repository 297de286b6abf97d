"""Fake (meta) kernels of the solbench operators: the output's shape, strides, dtype and device from the
inputs, so torch.compile, torch.export and FakeTensorMode trace the ops without running them. The CUDA
kernels (python/csrc) validate; these only describe the result."""
import torch


@torch.library.register_fake("solbench::rms_norm")
def _rms_norm(x, weight, eps, variant="auto"):
    return x.new_empty(x.shape)  # contiguous, as the CUDA kernel's output


@torch.library.register_fake("solbench::rms_norm_backward")
def _rms_norm_backward(dy, x, weight, eps, variant="auto"):
    return x.new_empty(x.shape), x.new_empty(x.shape[-1:])  # dx like x, dw [hidden]: contiguous, x's dtype


@torch.library.register_fake("solbench::fused_add_rms_norm")
def _fused_add_rms_norm(x, residual, weight, eps, variant="auto"):
    return None  # in place: x and residual keep their shapes, strides and dtypes


@torch.library.register_fake("solbench::attention")
def _attention(q, k, v, causal, scale=None, variant="auto"):
    batch, heads_q, q_len, head_dim = q.shape
    # BSHD memory seen as [batch, heads_q, q_len, head_dim]: the CUDA kernel's output (attention_op.cpp).
    return q.new_empty((batch, q_len, heads_q, head_dim)).transpose(1, 2)


@torch.library.register_fake("solbench::paged_attention")
def _paged_attention(q, k_cache, v_cache, block_table, seq_lens, seq_lens_cpu=None, causal=True, scale=None,
                     k_scale=1.0, v_scale=1.0, variant="auto"):
    batch, heads_q, q_len, head_dim = q.shape
    return q.new_empty((batch, q_len, heads_q, head_dim)).transpose(1, 2)  # as solbench::attention's
