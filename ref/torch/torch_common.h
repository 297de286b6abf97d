// What the libtorch adapters share (torch headers: include only from the libtorch sources, ref/torch/*.cpp
// and bench/layer.cpp).
#pragma once

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "common/dtype.h"

namespace sb::torch_ref {

inline at::ScalarType scalar_type(DType t) {
  switch (t) {
    case DType::f32: return at::kFloat;
    case DType::f16: return at::kHalf;
    case DType::bf16: return at::kBFloat16;
  }
  throw std::invalid_argument("torch baseline: unsupported dtype");
}

inline int current_device() {
  int device = 0;
  cudaGetDevice(&device);
  return device;
}

// The suite's stream as a PyTorch stream, for CUDAStreamGuard and CUDAGraph.
inline c10::cuda::CUDAStream external_stream(cudaStream_t stream) {
  return c10::cuda::getStreamFromExternal(stream, static_cast<c10::DeviceIndex>(current_device()));
}

// PyTorch's reason, kept in thread_local storage until the next refusal on this thread.
inline const char* refusal(const c10::Error& e) {
  thread_local std::string reason;
  reason = e.what_without_backtrace();
  return reason.c_str();
}

// Runs f on `stream` in inference mode (no autograd bookkeeping, as a serving stack runs); a c10::Error
// becomes its message.
template <typename F>
const char* guarded(cudaStream_t stream, F&& f) {
  try {
    c10::cuda::CUDAStreamGuard guard(external_stream(stream));
    c10::InferenceMode inference;
    return f();
  } catch (const c10::Error& e) {
    return refusal(e);
  }
}

}  // namespace sb::torch_ref
