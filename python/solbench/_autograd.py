"""solbench::rms_norm's backward: solbench::rms_norm_backward, registered as the op's autograd formula with
torch.library.register_autograd, so the op (and solbench.nn.RMSNorm) trains in eager mode and under
torch.compile. The forward saves x and weight, not rstd: the backward kernels recompute it from x.

solbench::fused_add_rms_norm has no backward: it writes its inputs in place, and its Autograd kernel
(python/csrc/fused_add_rmsnorm_op.cpp) refuses inputs that require grad while grad mode is on."""
import torch


def _setup_context(ctx, inputs, output):
    x, weight, eps, _variant = inputs
    ctx.save_for_backward(x, weight)
    ctx.eps = eps


def _backward(ctx, dy):
    x, weight = ctx.saved_tensors
    # dy's strides are whatever the next op's backward made (an expanded scalar for y.sum(), say); the kernels
    # read contiguous rows. The forward's variant names an rms_norm kernel, not a backward one: "auto".
    dx, dw = torch.ops.solbench.rms_norm_backward(dy.contiguous(), x, weight, ctx.eps, "auto")
    needs_x, needs_weight = ctx.needs_input_grad[:2]
    return dx if needs_x else None, dw if needs_weight else None, None, None


torch.library.register_autograd("solbench::rms_norm", _backward, setup_context=_setup_context)
