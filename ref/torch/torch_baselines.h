// PyTorch baselines and references, built only with libtorch (SOLBENCH_HAVE_TORCH). No torch type
// crosses this header, so the rest of the suite compiles without torch's headers.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "harness/timer.h"
#include "rmsnorm/rmsnorm.h"

namespace sb::torch_ref {

const char* version();  // TORCH_VERSION, e.g. "2.11.0"

// at::rms_norm(x, {hidden}, w, eps) on `stream`, wrapping the problem's device pointers. The result is
// a fresh tensor from PyTorch's caching allocator, as a PyTorch user gets it; with write_y it is also
// copied into problem.y (for verification only: the copy is not part of what is timed).
void rms_norm(const rmsnorm::Problem& p, cudaStream_t stream, bool write_y);
// The composite a PyTorch user writes (Hugging Face's LlamaRMSNorm): upcast to fp32, pow(2),
// mean(-1, keepdim), rsqrt(var + eps), multiply, downcast, multiply by the weight.
void rms_norm_composite(const rmsnorm::Problem& p, cudaStream_t stream, bool write_y);

// Hot mode for PyTorch ops: captures `launches` calls through at::cuda::CUDAGraph, whose private
// memory pool serves the allocations made during capture (a plain stream capture cannot).
std::unique_ptr<bench::Replay> capture_graph(cudaStream_t stream, int launches, const bench::LaunchFn& launch);

}  // namespace sb::torch_ref
