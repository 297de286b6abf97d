// naive: one thread per row. The thread walks its row twice: sum of squares, then normalize and scale.
// Mapping: thread t of the grid owns row t; blocks of 128 threads.
// Traffic: x is read twice (the second pass mostly from L1/L2), w once per row, y written once. Adjacent
// threads touch addresses `hidden` elements apart, so no access is coalesced, and a short grid (few
// rows) runs on a few threads of a few SMs: this is the baseline the other variants are measured from.
#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/vec.cuh"
#include "rmsnorm/rmsnorm.h"

namespace sb::rmsnorm::naive {

constexpr int kThreads = 128;

template <typename T>
__global__ void kernel(const T* x, const T* w, T* y, int64_t rows, int64_t hidden, float eps) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const T* xr = x + row * hidden;
  T* yr = y + row * hidden;
  float sum_sq = 0.0f;
  for (int64_t i = 0; i < hidden; ++i) {
    const float v = to_float(xr[i]);
    sum_sq += v * v;
  }
  const float rstd = rsqrtf(sum_sq / static_cast<float>(hidden) + eps);
  for (int64_t i = 0; i < hidden; ++i) yr[i] = from_float<T>(to_float(xr[i]) * rstd * to_float(w[i]));
}

std::string supports(const Problem&) { return ""; }

void launch(const Problem& p, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((p.rows + kThreads - 1) / kThreads);
  dispatch(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    kernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(p.x), static_cast<const T*>(p.w),
                                               static_cast<T*>(p.y), p.rows, p.hidden,
                                               static_cast<float>(p.eps));
  });
  SB_LAUNCH_CHECK();
}

}  // namespace sb::rmsnorm::naive
