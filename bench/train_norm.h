// The training step's RMSNorm with autograd, computed by PyTorch or by this suite's kernels (train_model.h's
// TrainNorm). Torch types: include only from libtorch sources (train_model.cpp and its GPU test).
#pragma once

#include <ATen/ATen.h>

#include "train_model.h"

namespace sb::bench {

// y = x * rsqrt(mean(x^2) + eps) * w over x's last dimension, differentiable in x and w. The norm runs in
// x's dtype: w is cast to it (a no-op in the model, where both are fp32), and w's gradient comes back in w's
// own dtype.
//   torch     at::rms_norm;
//   solbench  SolbenchRmsNorm (train_norm.cpp), a torch::autograd::Function: the forward runs
//             rmsnorm::best_variant's kernel and saves x and w; the backward runs rmsnorm_backward's
//             best_variant (rstd recomputed from x; its dw partials in a workspace from at::empty), both on
//             the current CUDA stream (the autograd engine sets the forward's stream for the backward).
//             The two show in a profile as solbench::rms_norm and solbench::rms_norm_backward.
// solbench throws c10::Error for x or w not on a CUDA device, w not of x's last size, or a dtype other than
// fp32, fp16 and bf16.
at::Tensor train_rms_norm(TrainNorm norm, const at::Tensor& x, const at::Tensor& w, double eps);

}  // namespace sb::bench
