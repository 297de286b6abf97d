// The current CUDA device's attributes that launch plans depend on: its SM count (decode_splitk's split
// heuristic, wgmma_flash's persistent blocks) and its compute capability (wgmma_flash's supports()).
// Host code only.
#pragma once

#include <cuda_runtime.h>

#include <atomic>

#include "common/check.h"

namespace sb {

namespace detail {
// Attribute Attr of the current device, read once per device and cached (thread-safe). Both attributes
// read through it are > 0 on a device, so 0 marks an entry not read yet.
template <cudaDeviceAttr Attr>
cudaError_t cached_device_attribute(int& value) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices] = {};
  int dev = 0;
  if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  const bool cacheable = dev >= 0 && dev < kMaxDevices;
  if (cacheable)
    if (const int v = cache[dev].load(std::memory_order_relaxed); v > 0) {
      value = v;
      return cudaSuccess;
    }
  if (const cudaError_t e = cudaDeviceGetAttribute(&value, Attr, dev); e != cudaSuccess) return e;
  if (cacheable) cache[dev].store(value, std::memory_order_relaxed);
  return cudaSuccess;
}
}  // namespace detail

// A CudaError without a device. Callers reach it after supports() has found a GPU.
inline int device_sm_count() {
  int n = 0;
  SB_CUDA_CHECK(detail::cached_device_attribute<cudaDevAttrMultiProcessorCount>(n));
  return n;
}

// The compute capability's major version; 0 without a device, with the error cleared, so that a
// supports() can refuse with its reason instead of throwing.
inline int device_major() {
  int major = 0;
  if (detail::cached_device_attribute<cudaDevAttrComputeCapabilityMajor>(major) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return major;
}

}  // namespace sb
