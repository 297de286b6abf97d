// What the RMSNorm backward variants share: the per-element math, the row statistics, and the dw column
// reduction that turns their partial rows into dw (reduce_dw.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/dtype.h"
#include "common/reduce.cuh"

namespace sb::rmsnorm_backward {

// A row's two numbers: rstd, and m = mean(x̂ * g) = rstd * sum(x * w * dy) / hidden.
struct RowStats {
  float rstd, m;
};

// From the row's sums: sum(x^2) (unused when the forward's rstd is given) and sum(x * w * dy).
__device__ inline RowStats row_stats(float sum_sq, float sum_xg, const float* saved_rstd, int64_t row,
                                     float inv_hidden, float eps) {
  const float r = saved_rstd ? saved_rstd[row] : rsqrtf(sum_sq * inv_hidden + eps);
  return {r, r * sum_xg * inv_hidden};
}

// One element: returns dx and adds dy * x̂ to the column's dw partial.
__device__ inline float grad_element(float x, float w, float dy, RowStats s, float& dw_acc) {
  const float xhat = x * s.rstd;
  dw_acc = fmaf(dy, xhat, dw_acc);
  return s.rstd * (w * dy - xhat * s.m);
}

// Sum of (a, b) over the block (blockDim.x a multiple of 32, <= 1024), the same bits in every thread: warp
// butterflies, then every thread adds the warps' pairs in warp order. `scratch` holds 32 float2 of shared
// memory; there is no trailing barrier, so a caller that calls it again before every thread has read the
// result passes the other of two scratch buffers (the barrier inside the next call orders the reuse).
__device__ inline float2 block_sum2(float a, float b, float2* scratch) {
  a = warp_sum(a);
  b = warp_sum(b);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = make_float2(a, b);
  __syncthreads();
  float2 s = scratch[0];
  for (int i = 1; i < static_cast<int>(blockDim.x / 32); ++i) {
    s.x += scratch[i].x;
    s.y += scratch[i].y;
  }
  return s;
}

// dw[j] = the sum over `count` partial rows ([count, hidden] fp32) of column j, rounded to dtype, in an order
// that depends only on count: 16 threads of a column each add every 16th row in row order, then a fixed tree
// of the 16. Enqueued on `stream`; checks the launch.
void reduce_dw_partials(const float* partials, int64_t count, int64_t hidden, DType dtype, void* dw,
                        cudaStream_t stream);

}  // namespace sb::rmsnorm_backward
