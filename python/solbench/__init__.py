"""The solbench kernels as PyTorch operators.

    import solbench
    y = solbench.rms_norm(x, weight, eps=1e-6)                # torch.ops.solbench.rms_norm, differentiable
    dx, dw = solbench.rms_norm_backward(dy, x, weight, 1e-6)  # torch.ops.solbench.rms_norm_backward
    solbench.fused_add_rms_norm(x, residual, weight, 1e-6)    # in place: residual += x; x = rms_norm(residual)
    o = solbench.attention(q, k, v, causal=True)              # torch.ops.solbench.attention, SDPA's layout
    o = solbench.attention(q, k_pages, v_pages, block_table=t, seq_lens=n)  # decode over a paged KV cache
    norm = solbench.nn.RMSNorm(4096, eps=1e-6, device="cuda")  # a drop-in for torch.nn.RMSNorm, trains too
    solbench.variants("attention")                             # the names `variant=` takes besides "auto"

Every op has a fake kernel, so torch.compile(fullgraph=True) traces them. rms_norm (and so nn.RMSNorm) has a
backward, the rms_norm_backward kernels registered as its autograd formula: it trains, eagerly and under
torch.compile. fused_add_rms_norm writes its inputs in place and has no backward: with grad mode on it
refuses inputs that require grad (RuntimeError); call it under torch.no_grad() or torch.inference_mode().
attention has no backward kernel yet: run it for inference; PyTorch warns if a backward pass reaches it.
ops.py says where the operator library is loaded from; importing without it raises ImportError saying how to
build it.
"""
from . import nn
from .ops import attention, fused_add_rms_norm, library_path, rms_norm, rms_norm_backward, variants

__all__ = ["attention", "fused_add_rms_norm", "library_path", "nn", "rms_norm", "rms_norm_backward", "variants"]
