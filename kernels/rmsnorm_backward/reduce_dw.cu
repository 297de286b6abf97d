// The dw column reduction of every RMSNorm backward variant (backward.cuh): a block of 32 columns x 16 row
// slices reads the partial rows coalesced (32 consecutive floats a warp), each slice sums every 16th row in
// row order, then a fixed tree over the 16 slices in shared memory. No atomics: the bits depend only on the
// partials and their count.
#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/vec.cuh"
#include "rmsnorm_backward/backward.cuh"

namespace sb::rmsnorm_backward {

namespace {
constexpr int kColumns = 32, kSlices = 16;

template <typename T>
__global__ void __launch_bounds__(kColumns * kSlices)
    reduce_kernel(const float* __restrict__ partials, int64_t count, int64_t hidden, T* __restrict__ dw) {
  __shared__ float sums[kSlices][kColumns];
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kColumns + threadIdx.x;
  float s = 0.0f;
  if (col < hidden)
    for (int64_t r = threadIdx.y; r < count; r += kSlices) s += partials[r * hidden + col];
  sums[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  for (int half = kSlices / 2; half > 0; half /= 2) {
    if (threadIdx.y < half) sums[threadIdx.y][threadIdx.x] += sums[threadIdx.y + half][threadIdx.x];
    __syncthreads();
  }
  if (threadIdx.y == 0 && col < hidden) dw[col] = from_float<T>(sums[0][threadIdx.x]);
}
}  // namespace

void reduce_dw_partials(const float* partials, int64_t count, int64_t hidden, DType dtype, void* dw,
                        cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((hidden + kColumns - 1) / kColumns);
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    reduce_kernel<T><<<blocks, dim3(kColumns, kSlices), 0, stream>>>(partials, count, hidden, static_cast<T*>(dw));
  });
  SB_LAUNCH_CHECK();
}

}  // namespace sb::rmsnorm_backward
