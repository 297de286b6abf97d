// persistent: a grid of as many blocks as the GPU holds at once (SM count x resident blocks an SM, at most
// min(rows, kMaxPartialRows)) strides over the rows, one row a block at a time. Thread t owns the same
// columns in every row (its accesses t, t + blockDim.x, ...: persistent_config), so the dw partial of its
// columns stays in registers across all the block's rows and is written once, one partial row a block; the
// column reduction (reduce_dw.cu) sums those rows in a fixed order: no atomics, the same bits on every run.
// x and dy are read once in 16-byte accesses (scalar when hidden is not a multiple of 16 bytes) and kept in
// registers across the row's one reduction (both sums at once, one barrier a row); w is read again for every
// row, from L1/L2. Constraint: the row fits 512 threads x 32 (16-bit 16-byte accesses), 16 (fp32 ones) or 8
// (scalar) elements a thread; two_kernel takes longer rows. Against two_kernel: one pass over x and dy instead of two, and one
// partial row a block instead of one store per 32 rows.
#include <algorithm>

#include "common/check.h"
#include "common/device.h"
#include "common/dispatch.cuh"
#include "common/vec.cuh"
#include "rmsnorm_backward/backward.cuh"
#include "rmsnorm_backward/rmsnorm_backward.h"

namespace sb::rmsnorm_backward::persistent {

constexpr int kMaxThreads = 512;

template <typename T, int Vec, int V>
__global__ void __launch_bounds__(kMaxThreads, 1)
    kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy,
           const float* __restrict__ saved_rstd, T* __restrict__ dx, float* __restrict__ partials, int64_t rows,
           int hidden, float inv_hidden, float eps) {
  using Access = sb::Vec<T, Vec>;
  __shared__ float2 scratch[2][32];  // block_sum2's, alternating between rows
  const int vectors = hidden / Vec;
  float acc[V][Vec];
#pragma unroll
  for (int i = 0; i < V; ++i)
#pragma unroll
    for (int e = 0; e < Vec; ++e) acc[i][e] = 0.0f;
  int parity = 0;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x, parity ^= 1) {
    const T* xr = x + row * hidden;
    const T* dyr = dy + row * hidden;
    Access xv[V], dyv[V];
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const int v = threadIdx.x + i * blockDim.x;
      if (v < vectors) {
        xv[i] = load_vec<Vec>(xr + v * Vec);
        dyv[i] = load_vec<Vec>(dyr + v * Vec);
      }
    }
    float sum_sq = 0.0f, sum_xg = 0.0f;
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const int v = threadIdx.x + i * blockDim.x;
      if (v < vectors) {
        const Access wv = load_vec<Vec>(w + v * Vec);
#pragma unroll
        for (int e = 0; e < Vec; ++e) {
          const float xf = to_float(xv[i].v[e]);
          sum_sq = fmaf(xf, xf, sum_sq);
          sum_xg = fmaf(xf, to_float(wv.v[e]) * to_float(dyv[i].v[e]), sum_xg);
        }
      }
    }
    const float2 sums = block_sum2(sum_sq, sum_xg, scratch[parity]);
    const RowStats s = row_stats(sums.x, sums.y, saved_rstd, row, inv_hidden, eps);
    T* dxr = dx + row * hidden;
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const int v = threadIdx.x + i * blockDim.x;
      if (v < vectors) {
        const Access wv = load_vec<Vec>(w + v * Vec);
        Access out;
#pragma unroll
        for (int e = 0; e < Vec; ++e)
          out.v[e] = from_float<T>(
              grad_element(to_float(xv[i].v[e]), to_float(wv.v[e]), to_float(dyv[i].v[e]), s, acc[i][e]));
        store_vec(dxr + v * Vec, out);
      }
    }
  }
  float* part = partials + static_cast<int64_t>(blockIdx.x) * hidden;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int v = threadIdx.x + i * blockDim.x;
    if (v < vectors)
#pragma unroll
      for (int e = 0; e < Vec; ++e) part[v * Vec + e] = acc[i][e];
  }
}

std::string supports(const Problem& p) {
  const PersistentConfig c = persistent_config(p.hidden, p.dtype);
  if (c.vectors_per_thread == 0)
    return "hidden " + std::to_string(p.hidden) + " does not fit one block's registers (512 threads x " +
           std::to_string(c.vec == 8 ? 32 : c.vec == 4 ? 16 : 8) + " elements)";
  const std::size_t align = c.vec * size_bytes(p.dtype);
  for (auto [ptr, name] :
       {std::pair<const void*, const char*>{p.x, "x"}, {p.w, "w"}, {p.dy, "dy"}, {p.dx, "dx"}})
    if (!is_aligned(ptr, align))
      return std::string(name) + " is not " + std::to_string(align) + "-byte aligned (needed by " +
             std::to_string(align) + "-byte accesses)";
  return "";
}

template <typename T, int Vec, int V>
void launch_typed(const Problem& p, const PersistentConfig& c, cudaStream_t stream) {
  auto* kern = kernel<T, Vec, V>;
  // Blocks of this kernel an SM holds at once, per block size (a multiple of 32 up to 512, a function of
  // hidden): asked of the runtime once each, not on every launch.
  static int resident_by_warps[512 / 32 + 1] = {};  // 0: not asked yet
  int& resident = resident_by_warps[c.block_threads / 32];
  if (resident == 0) {
    SB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kern, c.block_threads, 0));
    resident = std::max(resident, 1);
  }
  const int64_t grid = std::min({p.rows, kMaxPartialRows, static_cast<int64_t>(device_sm_count()) * resident});
  auto* partials = static_cast<float*>(p.workspace);
  kern<<<static_cast<unsigned>(grid), c.block_threads, 0, stream>>>(
      static_cast<const T*>(p.x), static_cast<const T*>(p.w), static_cast<const T*>(p.dy), p.rstd,
      static_cast<T*>(p.dx), partials, p.rows, static_cast<int>(p.hidden), 1.0f / static_cast<float>(p.hidden),
      static_cast<float>(p.eps));
  SB_LAUNCH_CHECK();
  reduce_dw_partials(partials, grid, p.hidden, p.dtype, p.dw, stream);
}

// One instantiation per (access width, accesses a thread) persistent_config can pick: 1 to 8 scalar
// accesses, 1 to 4 16-byte ones.
template <typename T, int Vec>
void by_depth(const Problem& p, const PersistentConfig& c, cudaStream_t stream) {
  switch (c.vectors_per_thread) {
    case 1: launch_typed<T, Vec, 1>(p, c, stream); break;
    case 2: launch_typed<T, Vec, 2>(p, c, stream); break;
    case 4: launch_typed<T, Vec, 4>(p, c, stream); break;
    default:
      if constexpr (Vec == 1) launch_typed<T, Vec, 8>(p, c, stream);
      break;
  }
}

void launch(const Problem& p, cudaStream_t stream) {
  const PersistentConfig c = persistent_config(p.hidden, p.dtype);
  dispatch(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (c.vec == 1)
      by_depth<T, 1>(p, c, stream);
    else
      by_depth<T, kVec16<T>>(p, c, stream);
  });
}

}  // namespace sb::rmsnorm_backward::persistent
