// warp_shuffle: one warp per row, 8 rows per block; the sum of squares is reduced with 5 butterfly
// shuffles (__shfl_xor_sync) instead of shared memory and barriers.
// Mapping: warp w of block b owns row 8b + w; lane l reads elements l, l+32, ... (coalesced).
// Traffic: as block_reduce (x read twice, the second time from L1/L2 when the row fits).
// Change from block_reduce: no shared memory, no __syncthreads, 8 rows in flight per block; but only
// 32 threads per row, so a single long row (decode) has little memory parallelism.
#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/reduce.cuh"
#include "common/vec.cuh"
#include "rmsnorm/rmsnorm.h"

namespace sb::rmsnorm::warp_shuffle {

constexpr int kWarpsPerBlock = 8;

template <typename T>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    kernel(const T* x, const T* w, T* y, int64_t rows, int64_t hidden, float eps) {
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;  // whole warps leave together: the shuffles below see full warps
  const T* xr = x + row * hidden;
  T* yr = y + row * hidden;

  float sum_sq = 0.0f;
  for (int64_t i = lane; i < hidden; i += 32) {
    const float v = to_float(xr[i]);
    sum_sq += v * v;
  }
  const float rstd = rsqrtf(warp_sum(sum_sq) / static_cast<float>(hidden) + eps);
  for (int64_t i = lane; i < hidden; i += 32) yr[i] = from_float<T>(to_float(xr[i]) * rstd * to_float(w[i]));
}

std::string supports(const Problem&) { return ""; }

void launch(const Problem& p, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((p.rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  dispatch(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    kernel<T><<<blocks, 32 * kWarpsPerBlock, 0, stream>>>(static_cast<const T*>(p.x),
                                                          static_cast<const T*>(p.w), static_cast<T*>(p.y),
                                                          p.rows, p.hidden, static_cast<float>(p.eps));
  });
  SB_LAUNCH_CHECK();
}

}  // namespace sb::rmsnorm::warp_shuffle
