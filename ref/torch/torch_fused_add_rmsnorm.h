// The PyTorch baseline of fused residual-add + RMSNorm, built only with libtorch (SOLBENCH_HAVE_TORCH). No torch
// type crosses this header.
#pragma once

#include <cuda_runtime.h>

#include "fused_add_rmsnorm/fused_add_rmsnorm.h"

namespace sb::torch_ref {

// The eager composite a PyTorch user writes, in place on the problem's buffers, on `stream`:
//   residual.add_(x); x.copy_(at::rms_norm(residual, {hidden}, w, eps))
// (two kernels and a copy: at::rms_norm's output is a fresh tensor from the caching allocator). Its outputs are
// the op's, so it is verified as a variant is.
void fused_add_rms_norm_eager(const fused_add_rmsnorm::Problem& p, cudaStream_t stream);

}  // namespace sb::torch_ref
