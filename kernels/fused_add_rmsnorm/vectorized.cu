// vectorized: one pass over the bytes. A group of threads owns a row (the launch shape of rmsnorm's
// vectorized variant: rmsnorm::vectorized_config); each thread loads its up to 8 16-byte vectors of x and of
// residual, adds them in fp32, stores the rounded sum to residual at once and keeps it in registers (one
// vector of the dtype per vector of the row) through the reduction, then writes x from those registers and
// w. w is staged in shared memory by cp.async alongside the loads where the config says so.
// Traffic: x and residual read once, residual and x written once, w once per block: Problem::bytes().
// Regimes: decode and latency rows run on the same kernel as bandwidth rows (no split rows, no programmatic
// dependent launch); rows longer than 512 threads x 8 vectors run two_pass.cuh's kernel with 16-byte
// accesses (residual re-read, mostly from L2). Hidden sizes that are not a multiple of 16 bytes take the same
// kernels with element accesses (vec = 1).
// Constraint: x, residual and w aligned to the access width; supports() says so otherwise (best_variant then
// picks two_pass). Against two_pass: the residual is not re-read, and every access is 16 bytes wide.
#include <cstdint>

#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/reduce.cuh"
#include "common/vec.cuh"
#include "fused_add_rmsnorm/fused_add_rmsnorm.h"
#include "fused_add_rmsnorm/two_pass.cuh"
#include "rmsnorm/rmsnorm.h"

namespace sb::fused_add_rmsnorm::vectorized {

constexpr int kMaxThreads = 512;  // rmsnorm::vectorized_config's widest row group and block
constexpr int kTwoPassThreads = 1024;
constexpr int kMaxStagedBytes = 64 * 1024;  // w of the longest staged row: 512 threads x 8 vectors x 16 B

// Thread j of a row's group of tpr threads (a power of two <= 512; rows_per_block = blockDim.x / tpr rows a
// block) holds the row's vectors j, j + tpr, ..., up to VectorsPerThread of them.
template <typename T, int Vec, int VectorsPerThread, bool StageW>
__global__ void __launch_bounds__(kMaxThreads, 1)
    kernel(T* __restrict__ x, T* __restrict__ residual, const T* __restrict__ w, int64_t rows, int hidden, float eps,
           int tpr) {
  __shared__ float scratch[32];
  extern __shared__ __align__(16) unsigned char smem[];
  using V = sb::Vec<T, Vec>;
  const int vectors = hidden / Vec;
  const int j = threadIdx.x % tpr;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / tpr) + threadIdx.x / tpr;
  const bool active = row < rows;  // no early return: inactive threads still reach group_sum's barrier
  T* xr = x + row * hidden;
  T* rr = residual + row * hidden;

  T* w_stage = reinterpret_cast<T*>(smem);
  constexpr bool kStageW = StageW && sizeof(V) == 16;
  if constexpr (kStageW)
    for (int v = threadIdx.x; v < vectors; v += blockDim.x)
      cp_async_16(w_stage + static_cast<int64_t>(v) * Vec, w + static_cast<int64_t>(v) * Vec);

  // Every load of x and residual is issued before the first add.
  V xv[VectorsPerThread], s[VectorsPerThread];
#pragma unroll
  for (int i = 0; i < VectorsPerThread; ++i) {
    const int v = j + i * tpr;
    const bool in = active && v < vectors;
    xv[i] = in ? load_vec<Vec>(xr + static_cast<int64_t>(v) * Vec) : V{};
    s[i] = in ? load_vec<Vec>(rr + static_cast<int64_t>(v) * Vec) : V{};
  }
  // s = x + residual, rounded to the dtype and stored: the residual output. The squares are the rounded sum's.
  float sum_sq = 0.0f;
#pragma unroll
  for (int i = 0; i < VectorsPerThread; ++i) {
#pragma unroll
    for (int e = 0; e < Vec; ++e) {
      s[i].v[e] = from_float<T>(to_float(xv[i].v[e]) + to_float(s[i].v[e]));
      const float f = to_float(s[i].v[e]);
      sum_sq += f * f;
    }
    const int v = j + i * tpr;
    if (active && v < vectors) store_vec(rr + static_cast<int64_t>(v) * Vec, s[i]);
  }
  // The reduction first, then the wait for w's copies (and the barrier that makes every thread's visible).
  const float rstd = rsqrtf(group_sum(sum_sq, tpr, scratch) / static_cast<float>(hidden) + eps);
  if constexpr (kStageW) {
    cp_async_wait_all();
    __syncthreads();
  }
  const T* wsrc = kStageW ? w_stage : w;
#pragma unroll
  for (int i = 0; i < VectorsPerThread; ++i) {
    const int v = j + i * tpr;
    if (active && v < vectors) {
      const V wv = load_vec<Vec>(wsrc + static_cast<int64_t>(v) * Vec);
      V out;
#pragma unroll
      for (int e = 0; e < Vec; ++e) out.v[e] = from_float<T>(to_float(s[i].v[e]) * rstd * to_float(wv.v[e]));
      store_vec(xr + static_cast<int64_t>(v) * Vec, out);
    }
  }
}

std::string supports(const Problem& p) {
  const rmsnorm::VectorizedConfig c = rmsnorm::vectorized_config(p.rows, p.hidden, p.dtype);
  const std::size_t align = c.vec * size_bytes(p.dtype);
  for (auto [ptr, name] : {std::pair<const void*, const char*>{p.x, "x"}, {p.residual, "residual"}, {p.w, "w"}})
    if (!is_aligned(ptr, align))
      return std::string(name) + " is not " + std::to_string(align) + "-byte aligned (needed by " +
             std::to_string(align) + "-byte accesses)";
  if (c.regime != rmsnorm::VectorizedRegime::two_pass && (p.rows + c.rows_per_block - 1) / c.rows_per_block > 0x7fffffff)
    return "more than 2^31 - 1 blocks of " + std::to_string(c.rows_per_block) + " rows";
  return "";
}

// The kernel of `c`'s depth (vectors a thread) for <T, Vec, StageW>, opted in once to kMaxStagedBytes of
// dynamic shared memory where it stages w.
template <typename T, int Vec, bool StageW>
void launch_kernel(const Problem& p, const rmsnorm::VectorizedConfig& c, cudaStream_t stream) {
  using Kernel = void (*)(T*, T*, const T*, int64_t, int, float, int);
  static constexpr Kernel kByDepth[] = {kernel<T, Vec, 1, StageW>, kernel<T, Vec, 2, StageW>,
                                        kernel<T, Vec, 4, StageW>, kernel<T, Vec, 8, StageW>};
  const int depth = c.vectors_per_thread <= 1 ? 0 : c.vectors_per_thread == 2 ? 1 : c.vectors_per_thread == 4 ? 2 : 3;
  const int smem = StageW ? static_cast<int>(p.hidden * sizeof(T)) : 0;
  if constexpr (StageW) {
    static const cudaError_t opt_in = [] {
      for (Kernel k : kByDepth)
        if (const cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxStagedBytes);
            e != cudaSuccess)
          return e;
      return cudaSuccess;
    }();
    SB_CUDA_CHECK(opt_in);
  }
  const auto blocks = static_cast<unsigned>((p.rows + c.rows_per_block - 1) / c.rows_per_block);
  kByDepth[depth]<<<blocks, c.block_threads, smem, stream>>>(static_cast<T*>(p.x), static_cast<T*>(p.residual),
                                                             static_cast<const T*>(p.w), p.rows,
                                                             static_cast<int>(p.hidden), static_cast<float>(p.eps),
                                                             c.threads_per_row);
}

template <typename T, int Vec>
void launch_typed(const Problem& p, const rmsnorm::VectorizedConfig& c, cudaStream_t stream) {
  if (c.regime == rmsnorm::VectorizedRegime::two_pass) {
    two_pass_kernel<T, Vec><<<two_pass_blocks(p.rows), kTwoPassThreads, 0, stream>>>(
        static_cast<T*>(p.x), static_cast<T*>(p.residual), static_cast<const T*>(p.w), p.rows,
        static_cast<int>(p.hidden), static_cast<float>(p.eps));
  } else if (c.stage_w) {
    launch_kernel<T, Vec, true>(p, c, stream);
  } else {
    launch_kernel<T, Vec, false>(p, c, stream);
  }
}

void launch(const Problem& p, cudaStream_t stream) {
  const rmsnorm::VectorizedConfig c = rmsnorm::vectorized_config(p.rows, p.hidden, p.dtype);
  dispatch(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    (c.vec == 1 ? launch_typed<T, 1> : launch_typed<T, kVec16<T>>)(p, c, stream);
  });
  SB_LAUNCH_CHECK();
}

}  // namespace sb::fused_add_rmsnorm::vectorized
