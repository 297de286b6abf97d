// two_kernel: block b owns a chunk of consecutive rows (two_kernel_chunk_rows: 32 or more, so that there are
// at most kMaxPartialRows chunks) and walks it 32 rows at a time. First a warp per row sums x^2 and x*w*dy
// (shuffle reduction) into the rows' rstd and mean(x̂*g) in shared memory; then thread t takes columns t,
// t+256, ..., writes dx of those columns for the 32 rows and carries their dw partial in a register, added
// into the block's partial row in the workspace. A second kernel (reduce_dw.cu) sums the partial rows per
// column in a fixed order: no atomics, the same bits on every run.
// Traffic: x and dy read twice (the second pass mostly from L2), w once per row from L1/L2, dx written once;
// the block's partial row read and written once per 32 rows; scalar accesses, any hidden size.
#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/reduce.cuh"
#include "common/vec.cuh"
#include "rmsnorm_backward/backward.cuh"
#include "rmsnorm_backward/rmsnorm_backward.h"

namespace sb::rmsnorm_backward::two_kernel {

constexpr int kWarps = 8, kThreads = 32 * kWarps;
constexpr int kGroupRows = 32;  // rows whose statistics the block holds at a time

template <typename T>
__global__ void __launch_bounds__(kThreads)
    kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy,
           const float* __restrict__ saved_rstd, T* __restrict__ dx, float* __restrict__ partials, int64_t rows,
           int64_t hidden, int64_t chunk, float inv_hidden, float eps) {
  __shared__ RowStats stats[kGroupRows];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * chunk;
  const int64_t end = first + chunk < rows ? first + chunk : rows;
  float* part = partials + static_cast<int64_t>(blockIdx.x) * hidden;
  for (int64_t group = first; group < end; group += kGroupRows) {
    const int n = static_cast<int>(end - group < kGroupRows ? end - group : kGroupRows);
    for (int k = warp; k < n; k += kWarps) {
      const int64_t off = (group + k) * hidden;
      float sum_sq = 0.0f, sum_xg = 0.0f;
      for (int64_t i = lane; i < hidden; i += 32) {
        const float xv = to_float(x[off + i]);
        if (!saved_rstd) sum_sq = fmaf(xv, xv, sum_sq);
        sum_xg = fmaf(xv, to_float(w[i]) * to_float(dy[off + i]), sum_xg);
      }
      sum_sq = warp_sum(sum_sq);
      sum_xg = warp_sum(sum_xg);
      if (lane == 0) stats[k] = row_stats(sum_sq, sum_xg, saved_rstd, group + k, inv_hidden, eps);
    }
    __syncthreads();
    for (int64_t i = threadIdx.x; i < hidden; i += kThreads) {
      const float wv = to_float(w[i]);
      float acc = 0.0f;
      for (int k = 0; k < n; ++k) {
        const int64_t off = (group + k) * hidden + i;
        dx[off] = from_float<T>(grad_element(to_float(x[off]), wv, to_float(dy[off]), stats[k], acc));
      }
      part[i] = group == first ? acc : part[i] + acc;  // only this thread touches column i of this row
    }
    __syncthreads();  // stats is rewritten by the next group
  }
}

std::string supports(const Problem&) { return ""; }

void launch(const Problem& p, cudaStream_t stream) {
  const int64_t chunk = two_kernel_chunk_rows(p.rows);
  const int64_t blocks = (p.rows + chunk - 1) / chunk;  // <= min(rows, kMaxPartialRows)
  auto* partials = static_cast<float*>(p.workspace);
  dispatch(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<const T*>(p.x), static_cast<const T*>(p.w), static_cast<const T*>(p.dy), p.rstd,
        static_cast<T*>(p.dx), partials, p.rows, p.hidden, chunk, 1.0f / static_cast<float>(p.hidden),
        static_cast<float>(p.eps));
  });
  SB_LAUNCH_CHECK();
  reduce_dw_partials(partials, blocks, p.hidden, p.dtype, p.dw, stream);
}

}  // namespace sb::rmsnorm_backward::two_kernel
