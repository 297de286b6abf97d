"""The solbench kernels as PyTorch operators.

    import solbench
    y = solbench.rms_norm(x, weight, eps=1e-6)                # torch.ops.solbench.rms_norm
    o = solbench.attention(q, k, v, causal=True)              # torch.ops.solbench.attention, SDPA's layout
    norm = solbench.nn.RMSNorm(4096, eps=1e-6, device="cuda")  # a drop-in for torch.nn.RMSNorm
    solbench.variants("attention")                             # the names `variant=` takes besides "auto"

Both ops have fake kernels, so torch.compile(fullgraph=True) traces them. Neither has a backward kernel
yet: run them for inference (torch.no_grad or torch.inference_mode); PyTorch warns if a backward pass
reaches them. ops.py says where the operator library is loaded from; importing without it raises
ImportError saying how to build it.
"""
from . import nn
from .ops import attention, library_path, rms_norm, variants

__all__ = ["attention", "library_path", "nn", "rms_norm", "variants"]
