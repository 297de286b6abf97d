// The two-pass kernel of fused_add_rmsnorm, shared by the two_pass variant (element accesses) and by the
// vectorized variant for rows too long to keep in registers (16-byte accesses).
#pragma once

#include <cstdint>

#include "common/reduce.cuh"
#include "common/vec.cuh"

namespace sb::fused_add_rmsnorm {

// A block per row (a grid-stride loop over rows, so any row count fits the grid); thread t handles the
// row's Vec-element accesses t, t + blockDim.x, ... (coalesced). Pass 1 reads x and residual, writes the
// rounded sum to residual and sums its squares; pass 2 re-reads that residual (each thread the elements it
// wrote, so no barrier is needed between them) with w and writes x. blockDim.x: a multiple of 32, <= 1024.
template <typename T, int Vec>
__global__ void two_pass_kernel(T* __restrict__ x, T* __restrict__ residual, const T* __restrict__ w, int64_t rows,
                                int hidden, float eps) {
  __shared__ float scratch[32];
  using V = sb::Vec<T, Vec>;
  const int vectors = hidden / Vec;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    T* xr = x + row * hidden;
    T* rr = residual + row * hidden;
    float sum_sq = 0.0f;
    for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
      const int64_t at = static_cast<int64_t>(v) * Vec;
      const V xv = load_vec<Vec>(xr + at), rv = load_vec<Vec>(rr + at);
      V s;
#pragma unroll
      for (int e = 0; e < Vec; ++e) {
        s.v[e] = from_float<T>(to_float(xv.v[e]) + to_float(rv.v[e]));
        const float f = to_float(s.v[e]);  // the rounded sum, as stored
        sum_sq += f * f;
      }
      store_vec(rr + at, s);
    }
    // block_sum ends with a barrier: the next row's pass may reuse scratch.
    const float rstd = rsqrtf(block_sum(sum_sq, scratch) / static_cast<float>(hidden) + eps);
    for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
      const int64_t at = static_cast<int64_t>(v) * Vec;
      const V s = load_vec<Vec>(rr + at), wv = load_vec<Vec>(w + at);
      V out;
#pragma unroll
      for (int e = 0; e < Vec; ++e) out.v[e] = from_float<T>(to_float(s.v[e]) * rstd * to_float(wv.v[e]));
      store_vec(xr + at, out);
    }
  }
}

// The grid of two_pass_kernel: a block per row, up to the grid's limit (the loop takes the rest).
inline unsigned two_pass_blocks(int64_t rows) { return static_cast<unsigned>(rows < 0x7fffffff ? rows : 0x7fffffff); }

}  // namespace sb::fused_add_rmsnorm
