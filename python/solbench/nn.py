"""Modules over the solbench operators."""
import math
import numbers

import torch

from . import ops


class RMSNorm(torch.nn.Module):
    """A drop-in for torch.nn.RMSNorm (the same constructor, parameters, state_dict and repr) whose forward
    runs solbench::rms_norm on CUDA tensors (fp32, fp16 or bf16), and whose backward runs
    solbench::rms_norm_backward.

    variant (keyword only): the forward kernel by name (solbench.variants("rmsnorm")), or "auto" for the best
    one. A non-contiguous input is copied first (the kernels read contiguous rows). The output has the input's
    dtype, as torch.nn.RMSNorm's: a weight of another dtype (fp32 norms in a bf16 model) is cast to the
    input's first, as the op takes one dtype, and its gradient comes back through the cast in the weight's own
    dtype. With elementwise_affine=False each call makes a weight of ones (the op always takes a weight).
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None, *,
                 variant="auto"):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.variant = variant
        if elementwise_affine:
            self.weight = torch.nn.Parameter(torch.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            torch.nn.init.ones_(self.weight)

    def forward(self, x):
        n = len(self.normalized_shape)
        if tuple(x.shape[x.dim() - n:]) != self.normalized_shape:
            raise RuntimeError(f"solbench.nn.RMSNorm: expected an input of shape [*, {', '.join(map(str, self.normalized_shape))}]"
                               f", got {list(x.shape)}")
        hidden = math.prod(self.normalized_shape)
        if self.weight is None:
            weight = torch.ones(hidden, device=x.device, dtype=x.dtype)
        else:
            weight = self.weight.reshape(hidden).to(x.dtype)  # no copy when the dtypes match
        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps
        y = ops.rms_norm(x.reshape(*x.shape[:x.dim() - n], hidden).contiguous(), weight, eps, self.variant)
        return y.reshape(x.shape)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)
