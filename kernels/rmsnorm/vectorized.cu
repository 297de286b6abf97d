// vectorized: x is read from memory exactly once, in 16-byte accesses, and kept in registers between
// the reduction and the output; the launch shape comes from the hidden size and the row count
// (<= 256 rows: latency regime, one vector a thread where possible and w staged in shared memory
// alongside x; more rows: bandwidth regime, 8 vectors a thread).
// Mapping: a group of threads_per_row (tpr, a power of two <= 512) threads owns a row; thread j of the
// group holds vectors j, j+tpr, ... (up to 8 vectors of 16 B: 128 B of the row per thread).
// Short rows pack several rows into a 128-thread block (tpr < 32 reduces inside a warp with shuffles;
// tpr > 32 adds one shared-memory step across the row's warps). Rows longer than 512 x 8 vectors
// (32768 16-bit or 16384 fp32 elements, 4096 for the scalar path) fall back to two passes over x, the
// second one mostly from L2. (16 vectors a thread spill in bf16 at 512 threads; 1024 threads cap
// registers at 64, which spills at 8: see ptxas -v.)
// Constraint: x, w, y aligned to the access width (16 B, or the element when hidden is not a multiple
// of 16 B); supports() says so otherwise.
#include <algorithm>
#include <type_traits>

#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/reduce.cuh"
#include "common/vec.cuh"
#include "rmsnorm/rmsnorm.h"

namespace sb::rmsnorm {

namespace {
constexpr int kMaxVectorsPerThread = 8;  // 128 B in flight per thread
constexpr int kMaxThreadsPerRow = 512;
constexpr int kTwoPassThreads = 1024;
constexpr int kMinBlockThreads = 128;
// Up to this many rows a launch is one wave of short work and its time is latency (decode).
constexpr int64_t kLatencyRows = 256;

int next_pow2(int64_t v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}
}  // namespace

VectorizedConfig vectorized_config(int64_t rows, int64_t hidden, DType dtype) {
  const int vec16 = 16 / static_cast<int>(size_bytes(dtype));
  VectorizedConfig c{};
  c.vec = hidden % vec16 == 0 ? vec16 : 1;
  const int64_t vectors = hidden / c.vec;
  if (vectors > int64_t{kMaxThreadsPerRow} * kMaxVectorsPerThread) {
    c.vectors_per_thread = 0;  // two-pass: one 1024-thread block per row
    c.threads_per_row = kTwoPassThreads;
  } else if (rows <= kLatencyRows) {
    // Latency regime: the fewest vectors a thread (the most threads, the shortest unrolled code) and
    // w staged in shared memory in the same memory round trip as x.
    c.vectors_per_thread = 1;
    while (c.vectors_per_thread < kMaxVectorsPerThread && vectors > int64_t{kMaxThreadsPerRow} * c.vectors_per_thread)
      c.vectors_per_thread *= 2;
    c.threads_per_row = next_pow2((vectors + c.vectors_per_thread - 1) / c.vectors_per_thread);
    c.stage_w = c.vec * size_bytes(dtype) == 16;
  } else {
    // Bandwidth regime: the fewest threads that hold the row in <= 8 vectors each: the most bytes in
    // flight per thread.
    c.threads_per_row = next_pow2((vectors + kMaxVectorsPerThread - 1) / kMaxVectorsPerThread);
    c.vectors_per_thread = next_pow2((vectors + c.threads_per_row - 1) / c.threads_per_row);  // 1, 2, 4, 8
  }
  c.block_threads = std::max(c.threads_per_row, kMinBlockThreads);
  c.rows_per_block = c.block_threads / c.threads_per_row;
  return c;
}

namespace vectorized {

// Sum over the tpr threads of a row. tpr <= 32: shuffles inside the warp. tpr > 32: one block = one
// row (rows_per_block == 1 once tpr >= 128; tpr == 64 has two rows of two warps each).
__device__ inline float row_sum(float v, int tpr, float* scratch) {
  v = warp_sum(v, tpr < 32 ? tpr : 32);
  if (tpr <= 32) return v;
  const int warp = threadIdx.x / 32, warps_per_row = tpr / 32;
  if (threadIdx.x % 32 == 0) scratch[warp] = v;
  __syncthreads();
  const int first = warp / warps_per_row * warps_per_row;
  float s = 0.0f;
  for (int i = 0; i < warps_per_row; ++i) s += scratch[first + i];
  return s;
}

// Elements are converted two at a time when the access holds an even count (packed 16-bit
// conversions), one at a time on the scalar path.
#define SB_PAIR_HELPERS                                                                     \
  constexpr int kPair = Vec % 2 == 0 ? 2 : 1;                                               \
  auto load_pair = [](const T* p) {                                                         \
    if constexpr (kPair == 2) return to_float2(p); else return make_float2(to_float(*p), 0.0f); \
  };                                                                                        \
  auto store_pair = [](T* p, float2 v) {                                                    \
    if constexpr (kPair == 2) from_float2(p, v); else *p = from_float<T>(v.x);              \
  };

template <typename T, int Vec, int VectorsPerThread, bool StageW>
__global__ void __launch_bounds__(kMaxThreadsPerRow, 1) kernel(const T* __restrict__ x, const T* __restrict__ w,
                                               T* __restrict__ y, int64_t rows, int hidden, float eps,
                                               int tpr) {
  __shared__ float scratch[32];
  using V = sb::Vec<T, Vec>;
  SB_PAIR_HELPERS
  const int vectors = hidden / Vec;
  const int j = threadIdx.x % tpr;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / tpr) + threadIdx.x / tpr;
  const bool active = row < rows;  // no early return: inactive threads still reach the barrier
  const T* xr = x + row * hidden;
  T* yr = y + row * hidden;

  // StageW: w is staged in shared memory by cp.async, once per block, while x is loaded into
  // registers: the weight's memory round trip overlaps x's instead of following the reduction.
  extern __shared__ __align__(16) unsigned char smem[];
  T* w_stage = reinterpret_cast<T*>(smem);
  constexpr bool kStageW = StageW && sizeof(V) == 16;
  if constexpr (kStageW)
    for (int v = threadIdx.x; v < vectors; v += blockDim.x) cp_async_16(w_stage + v * Vec, w + static_cast<int64_t>(v) * Vec);

  V r[VectorsPerThread];
#pragma unroll
  for (int i = 0; i < VectorsPerThread; ++i) {
    const int v = j + i * tpr;
    r[i] = active && v < vectors ? load_vec<Vec>(xr + static_cast<int64_t>(v) * Vec) : V{};
  }
  float sum_sq = 0.0f;
#pragma unroll
  for (int i = 0; i < VectorsPerThread; ++i) {
#pragma unroll
    for (int e = 0; e < Vec; e += kPair) {
      const float2 f = load_pair(&r[i].v[e]);
      sum_sq += f.x * f.x + f.y * f.y;
    }
  }
  if constexpr (kStageW) {
    cp_async_wait_all();
    __syncthreads();
  }
  const float rstd = rsqrtf(row_sum(sum_sq, tpr, scratch) / static_cast<float>(hidden) + eps);
  const T* wsrc = kStageW ? w_stage : w;
#pragma unroll
  for (int i = 0; i < VectorsPerThread; ++i) {
    const int v = j + i * tpr;
    if (active && v < vectors) {
      const V wv = load_vec<Vec>(wsrc + static_cast<int64_t>(v) * Vec);
      V out;
#pragma unroll
      for (int e = 0; e < Vec; e += kPair) {
        const float2 xv = load_pair(&r[i].v[e]), wf = load_pair(&wv.v[e]);
        store_pair(&out.v[e], make_float2(xv.x * rstd * wf.x, xv.y * rstd * wf.y));
      }
      store_vec(yr + static_cast<int64_t>(v) * Vec, out);
    }
  }
}

// Rows too long for registers: one 1024-thread block per row, two vectorized passes over x.
template <typename T, int Vec>
__global__ void __launch_bounds__(kTwoPassThreads)
    kernel_two_pass(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int hidden, float eps) {
  __shared__ float scratch[32];
  using V = sb::Vec<T, Vec>;
  const int vectors = hidden / Vec;
  const T* xr = x + static_cast<int64_t>(blockIdx.x) * hidden;
  T* yr = y + static_cast<int64_t>(blockIdx.x) * hidden;
  float sum_sq = 0.0f;
  for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
    const V xv = load_vec<Vec>(xr + static_cast<int64_t>(v) * Vec);
#pragma unroll
    for (int e = 0; e < Vec; ++e) {
      const float f = to_float(xv.v[e]);
      sum_sq += f * f;
    }
  }
  const float rstd = rsqrtf(block_sum(sum_sq, scratch) / static_cast<float>(hidden) + eps);
  for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
    const V xv = load_vec<Vec>(xr + static_cast<int64_t>(v) * Vec);
    const V wv = load_vec<Vec>(w + static_cast<int64_t>(v) * Vec);
    V out;
#pragma unroll
    for (int e = 0; e < Vec; ++e) out.v[e] = from_float<T>(to_float(xv.v[e]) * rstd * to_float(wv.v[e]));
    store_vec(yr + static_cast<int64_t>(v) * Vec, out);
  }
}

std::string supports(const Problem& p) {
  const VectorizedConfig c = vectorized_config(p.rows, p.hidden, p.dtype);
  const std::size_t align = c.vec * size_bytes(p.dtype);
  for (auto [ptr, name] : {std::pair<const void*, const char*>{p.x, "x"}, {p.w, "w"}, {p.y, "y"}})
    if (!is_aligned(ptr, align))
      return std::string(name) + " is not " + std::to_string(align) + "-byte aligned (needed by " +
             std::to_string(align) + "-byte accesses)";
  if (c.vectors_per_thread == 0 && p.rows > 0x7fffffff) return "rows > 2^31 - 1 (two-pass: one block per row)";
  return "";
}

template <typename T, int Vec>
void launch_typed(const Problem& p, const VectorizedConfig& c, cudaStream_t stream) {
  const auto* x = static_cast<const T*>(p.x);
  const auto* w = static_cast<const T*>(p.w);
  auto* y = static_cast<T*>(p.y);
  const int hidden = static_cast<int>(p.hidden);
  const float eps = static_cast<float>(p.eps);
  if (c.vectors_per_thread == 0) {
    kernel_two_pass<T, Vec><<<static_cast<unsigned>(p.rows), c.block_threads, 0, stream>>>(x, w, y, hidden, eps);
    return;
  }
  const auto blocks = static_cast<unsigned>((p.rows + c.rows_per_block - 1) / c.rows_per_block);
  const int smem = c.stage_w ? hidden * static_cast<int>(sizeof(T)) : 0;
  auto go = [&](auto kern) {
    if (smem > 48 * 1024) {  // opt in once per instantiation (up to 64 KB: 4096 vectors of 16 B)
      static const cudaError_t opt_in = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
      SB_CUDA_CHECK(opt_in);
    }
    kern<<<blocks, c.block_threads, smem, stream>>>(x, w, y, p.rows, hidden, eps, c.threads_per_row);
  };
  auto by_depth = [&](auto stage) {
    constexpr bool kStage = decltype(stage)::value;
    switch (c.vectors_per_thread) {
      case 1: go(kernel<T, Vec, 1, kStage>); break;
      case 2: go(kernel<T, Vec, 2, kStage>); break;
      case 4: go(kernel<T, Vec, 4, kStage>); break;
      default: go(kernel<T, Vec, 8, kStage>); break;
    }
  };
  if (c.stage_w)
    by_depth(std::true_type{});
  else
    by_depth(std::false_type{});
}

void launch(const Problem& p, cudaStream_t stream) {
  const VectorizedConfig c = vectorized_config(p.rows, p.hidden, p.dtype);
  dispatch(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (c.vec == 1)
      launch_typed<T, 1>(p, c, stream);
    else
      launch_typed<T, kVec16<T>>(p, c, stream);
  });
  SB_LAUNCH_CHECK();
}

}  // namespace vectorized
}  // namespace sb::rmsnorm
