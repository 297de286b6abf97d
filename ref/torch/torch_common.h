// What the libtorch adapters share (torch headers: include only from ref/torch/*.cpp).
#pragma once

#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include <stdexcept>

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

}  // namespace sb::torch_ref
