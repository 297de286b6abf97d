// PyTorch's RMSNorm backward as a PyTorch user runs it in training, built only with libtorch (no torch type
// crosses this header).
#pragma once

#include <cuda_runtime.h>

#include "rmsnorm_backward/rmsnorm_backward.h"

namespace sb::torch_ref {

// The backward of at::rms_norm(x, {hidden}, w, eps) through autograd, on `stream`: x and w (the problem's
// device memory, wrapped) are leaves that require grad; the forward runs once per problem, on the first call
// (outside any timed launch: the benchmark verifies before it times), and every call then runs
// torch::autograd::grad(y, {x, w}, dy) on that graph with retain_graph, so a call is the backward alone,
// the autograd engine's host work included. dx and dw are fresh tensors from the caching allocator; with
// write_outputs they are also copied into problem.dx and problem.dw (for verification only). The problem's
// rstd and workspace are not used: PyTorch saves its own rstd in the forward.
void rms_norm_backward_autograd(const rmsnorm_backward::Problem& p, cudaStream_t stream, bool write_outputs);

}  // namespace sb::torch_ref
