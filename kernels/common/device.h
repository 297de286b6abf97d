// The current CUDA device's SM count, for the launch plans that depend on it (decode_splitk's split
// heuristic, wgmma_flash's persistent blocks). Host code only.
#pragma once

#include <cuda_runtime.h>

#include <atomic>

#include "common/check.h"

namespace sb {

// Read once per device and cached (thread-safe); a CudaError without a device. Callers reach it after
// supports() has found a GPU.
inline int device_sm_count() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices] = {};
  int dev = 0;
  SB_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev >= 0 && dev < kMaxDevices)
    if (const int n = cache[dev].load(std::memory_order_relaxed); n > 0) return n;
  int n = 0;
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  if (dev >= 0 && dev < kMaxDevices) cache[dev].store(n, std::memory_order_relaxed);
  return n;
}

}  // namespace sb
