// Exact, wrapping 32-bit word sums on the device, for the references that prove they read every byte once
// (ref_kv_read's read_sum_kernel, ref_kv_stream): kernels/common/reduce.cuh's reductions are float.
#pragma once

#include <cuda_runtime.h>

namespace sb::bench {

__device__ __forceinline__ unsigned word_sum4(const uint4& v) { return v.x + v.y + v.z + v.w; }

// Writes the block's sum of every thread's `acc` to *out (thread 0 writes). Call from every thread of a block of
// Threads threads (a multiple of 32), once a kernel.
template <int Threads>
__device__ inline void write_block_word_sum(unsigned acc, unsigned* out) {
  static_assert(Threads % 32 == 0, "whole warps");
  for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
  __shared__ unsigned warp_sums[Threads / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned total = 0;
    for (int w = 0; w < Threads / 32; ++w) total += warp_sums[w];
    *out = total;
  }
}

}  // namespace sb::bench
