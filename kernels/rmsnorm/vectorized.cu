// vectorized: x is read from memory exactly once, in 16-byte accesses, and kept in registers between
// the reduction and the output; the launch shape comes from the problem (vectorized_config, below: a
// decode, latency, bandwidth or two-pass regime). A group of threads owns a row, each thread up to 8
// vectors of it (128 B in flight); short rows share a block. Traffic: x read and y written once, w once
// per block (staged in shared memory, or with x in registers for rows longer than 8 KB); a decode row split
// over S blocks (vectorized_blocks_per_row) has its x read by each of them: S times from L2, once from
// memory if the lines stay in L2 between them (expected, not profiled). x is loaded with an L2 evict-last
// policy (load_x, below).
// Constraint: x, w, y aligned to the access width (16 B, or the element when hidden is not a multiple
// of 16 B); supports() says so otherwise.
// Against block_reduce: x stays in registers between the reduction and the output, in 16-byte accesses
// (results/h200/FINDINGS.md has the measured effect).
#include <algorithm>
#include <type_traits>

#include "common/check.h"
#include "common/device.h"
#include "common/dispatch.cuh"
#include "common/pdl.cuh"
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
// The bandwidth regime stages w for rows of up to 8 KB; longer rows load w into registers with x (staging
// 32 KB rows costs the staged kernel's 94 registers and gains nothing), 8-16 KB rows at kMidRowVectors a
// thread, together with x's evict-last loads (load_x).
constexpr int64_t kBandwidthStageMaxBytes = 8 * 1024;
// Rows of more than kBandwidthStageMaxBytes and up to kMidRowMaxBytes (512-1024 16-byte vectors): this
// many vectors a thread (256 threads for 16 KB), the x and w of a thread in 32 registers instead of 64
// (Triton's one-pass RMSNorm at 256 threads a 16 KB row reads as fast).
constexpr int64_t kMidRowMaxBytes = 2 * kBandwidthStageMaxBytes;
constexpr int kMidRowVectors = 4;
// Decode kernel: rows of kDecodeMinVectors (one a lane) to kDecodeMaxHidden elements, up to
// kDecodeVectors 16-byte vectors of x and as many of w a lane.
constexpr int kDecodeVectors = 4;
constexpr int64_t kDecodeMinVectors = 32;
constexpr int64_t kDecodeMaxHidden = 8192;
static_assert(kDecodeMaxHidden / 4 / kDecodeVectors <= kMaxThreadsPerRow, "a decode row of fp32 fits one block");

int next_pow2(int64_t v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

template <int N>
constexpr std::integral_constant<int, N> kInt{};
}  // namespace

// The regime and launch shape (host code, pinned by tests/test_rmsnorm_problem.cpp):
// - decode (<= 256 rows of 16-byte vectors, 32 vectors to 8192 elements): kernel_decode, one row a block
//   of the fewest whole warps that hold it in <= 4 vectors a lane (1 x 4096 bf16: 4 warps; 64 x 8192: 8),
//   a row split over 2 or 4 such blocks when there are SMs to spare (vectorized_blocks_per_row).
// - latency (the other problems of <= 256 rows): kernel with the fewest vectors a thread (one where the
//   row fits 512 threads) and w staged in shared memory by cp.async in the same memory round trip as x.
// - bandwidth (> 256 rows): kernel with the fewest threads that hold the row in <= 8 vectors each (the
//   most bytes in flight per thread; <= kMidRowVectors for rows of 8-16 KB), w staged as well for rows
//   of <= 8 KB; longer rows load w into registers with x.
// - two-pass (rows longer than 512 x 8 vectors: 32768 16-bit or 16384 fp32 elements, 4096 scalar): one
//   1024-thread block a row, two passes over x, the second mostly from L2.
VectorizedConfig vectorized_config(int64_t rows, int64_t hidden, DType dtype) {
  const int vec16 = 16 / static_cast<int>(size_bytes(dtype));
  VectorizedConfig c{};
  c.vec = hidden % vec16 == 0 ? vec16 : 1;
  const bool wide = c.vec == vec16;  // 16-byte accesses
  const int64_t vectors = hidden / c.vec;
  if (wide && rows <= kLatencyRows && vectors >= kDecodeMinVectors && hidden <= kDecodeMaxHidden) {
    // Decode: one row a block of the fewest warps that hold it in <= kDecodeVectors vectors a lane.
    c.regime = VectorizedRegime::decode;
    int warps = 1;
    while (int64_t{32} * warps * kDecodeVectors < vectors) warps *= 2;
    c.threads_per_row = 32 * warps;
    c.vectors_per_thread = next_pow2((vectors + c.threads_per_row - 1) / c.threads_per_row);  // 4 if warps > 1
    c.block_threads = c.threads_per_row;
    c.rows_per_block = 1;
    return c;
  }
  if (vectors > int64_t{kMaxThreadsPerRow} * kMaxVectorsPerThread) {
    c.regime = VectorizedRegime::two_pass;
    c.vectors_per_thread = 0;
    c.threads_per_row = kTwoPassThreads;
  } else if (rows <= kLatencyRows) {
    // Latency: the fewest vectors a thread (the most threads, the shortest unrolled code) and w staged in
    // shared memory in the same memory round trip as x.
    c.regime = VectorizedRegime::latency;
    c.vectors_per_thread = 1;
    while (c.vectors_per_thread < kMaxVectorsPerThread && vectors > int64_t{kMaxThreadsPerRow} * c.vectors_per_thread)
      c.vectors_per_thread *= 2;
    c.threads_per_row = next_pow2((vectors + c.vectors_per_thread - 1) / c.vectors_per_thread);
    c.stage_w = wide;
  } else {
    // Bandwidth: the fewest threads that hold the row in <= 8 vectors each (the most bytes in flight per
    // thread); w staged too, so that it arrives with x instead of one memory round trip after the reduction.
    c.regime = VectorizedRegime::bandwidth;
    const int64_t row_bytes = hidden * static_cast<int64_t>(size_bytes(dtype));
    const bool mid_row = wide && row_bytes > kBandwidthStageMaxBytes && row_bytes <= kMidRowMaxBytes;
    const int per_thread = mid_row ? kMidRowVectors : kMaxVectorsPerThread;
    c.threads_per_row = next_pow2((vectors + per_thread - 1) / per_thread);
    c.vectors_per_thread = next_pow2((vectors + c.threads_per_row - 1) / c.threads_per_row);  // 1, 2, 4, 8
    c.stage_w = wide && row_bytes <= kBandwidthStageMaxBytes;
  }
  c.block_threads = std::max(c.threads_per_row, kMinBlockThreads);
  c.rows_per_block = c.block_threads / c.threads_per_row;
  return c;
}

// A decode launch of fewer rows than SMs leaves SMs idle while each busy one pulls its row's x, w and y
// through its own load path: 48 KB an SM at 64 x 8192 bf16, on 64 of 132 SMs. Split over S blocks, a row's
// blocks each read all of x (the sum of squares) but only their 1/S of w and y: 32 KB an SM at S = 2. No
// cluster and no exchange: a row over a cluster of 2 or 4 blocks, sharing partial sums through distributed
// shared memory, loses more hot to the cluster's launch than it gains. The split gains about 5% cold where a
// row's share of the load path is large, nothing at 1 x 4096.
int vectorized_blocks_per_row(const VectorizedConfig& c, int64_t rows, int64_t hidden, int sm_count) {
  const bool whole = c.regime == VectorizedRegime::decode && c.vectors_per_thread == kDecodeVectors &&
                     int64_t{c.threads_per_row} * kDecodeVectors * c.vec == hidden;
  if (!whole || rows < 1) return 1;
  for (const int s : {4, 2})
    if (rows * s <= sm_count) return s;
  return 1;
}

namespace vectorized {

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

// 16-byte loads as volatile asm: with __ldg the compiler sank w's load of the first vector into the
// output block, after the reduction (one more memory round trip on the critical path).
__device__ inline uint4 load_evict_first(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
// x, read once, with an L2 evict-last policy (and L1 evict-last), as torch.compile's RMSNorm loads it.
// x's lines then go to the L2's persisting set-aside (11.25 MiB on these H200s; the cold protocol resets
// it before each launch: bench/harness/timer.h), apart from y's dirty lines (why that is faster was not
// profiled: x is read only once, and the DRAM bytes should not change).
// What it buys here depends on w not being staged (kBandwidthStageMaxBytes). The policy is made once a
// thread (l2_evict_last_policy, common/vec.cuh) and passed to each load.
__device__ inline uint4 load_x(const uint4* p, uint64_t pol) {
  uint4 v;
  asm volatile("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
  return v;
}
__device__ inline uint4 load_read_only(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// The latency and bandwidth kernel: a group of threads_per_row (tpr, a power of two <= 512) threads owns
// a row; thread j of the group holds vectors j, j+tpr, ... (up to 8 vectors of 16 B: 128 B of the row per
// thread). Short rows pack several rows into a 128-thread block (tpr < 32 reduces inside a warp with
// shuffles; tpr > 32 adds one shared-memory step across the row's warps). (16 vectors a thread spill in
// bf16 at 512 threads; 1024 threads cap registers at 64, which spills at 8: see ptxas -v.)
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

  // Rows whose w is not staged (> 8 KB: 4096 x 8192, 4096 x 16384) keep x as raw 32-bit words, opaque until rstd is
  // known and converted to fp32 again for the output: at 8 vectors a thread bf16 takes 64 registers
  // instead of 94 (ptxas -v; fp16 64 instead of 67, fp32 72 either way), so 4 blocks of 256 threads fit
  // an SM instead of 2 (128 KB of x in flight). Where w is staged the same change is noise, so those keep
  // the plain path; evict-first hints on top lose.
  // The same rows load w's vectors into registers with x's (raw too, read-only path), so that w's memory
  // round trip is not on the path after the reduction: 64 -> 96 registers bf16, 2 blocks of 256 an SM.
  // Prefetching w to L1 with x instead (the registers unchanged) is slower.
  constexpr bool kRaw = sizeof(V) == 16 && !kStageW;
  uint64_t x_policy = 0;
  if constexpr (sizeof(V) == 16) x_policy = l2_evict_last_policy();
  V r[VectorsPerThread];
#pragma unroll
  for (int i = 0; i < VectorsPerThread; ++i) {
    const int v = j + i * tpr;
    if constexpr (sizeof(V) == 16) {  // 16-byte vectors: load_x
      uint4 a = make_uint4(0, 0, 0, 0);
      if (active && v < vectors) a = load_x(reinterpret_cast<const uint4*>(xr + static_cast<int64_t>(v) * Vec), x_policy);
      memcpy(&r[i], &a, 16);
    } else {
      r[i] = active && v < vectors ? load_vec<Vec>(xr + static_cast<int64_t>(v) * Vec) : V{};
    }
  }
  [[maybe_unused]] uint4 wr[kRaw ? VectorsPerThread : 1];
  if constexpr (kRaw) {
#pragma unroll
    for (int i = 0; i < VectorsPerThread; ++i) {
      const int v = j + i * tpr;
      const uint4* src = reinterpret_cast<const uint4*>(w + static_cast<int64_t>(v) * Vec);
      wr[i] = active && v < vectors ? load_read_only(src) : make_uint4(0, 0, 0, 0);
    }
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
  const float rstd = rsqrtf(group_sum(sum_sq, tpr, scratch) / static_cast<float>(hidden) + eps);
  const T* wsrc = kStageW ? w_stage : w;
#pragma unroll
  for (int i = 0; i < VectorsPerThread; ++i) {
    const int v = j + i * tpr;
    if (active && v < vectors) {
      if constexpr (kRaw) {
        uint32_t xw[4];
        memcpy(xw, &r[i], 16);
#pragma unroll
        for (int k = 0; k < 4; ++k) asm volatile("" : "+r"(xw[k]) : "f"(rstd));
        memcpy(&r[i], xw, 16);
      }
      V wv;
      if constexpr (kRaw) {  // w's words opaque until rstd too, as x's, so that they stay raw registers
        asm volatile("" : "+r"(wr[i].x), "+r"(wr[i].y), "+r"(wr[i].z), "+r"(wr[i].w) : "f"(rstd));
        memcpy(&wv, &wr[i], 16);
      } else {
        wv = load_vec<Vec>(wsrc + static_cast<int64_t>(v) * Vec);
      }
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

// The decode kernel keeps x and w as raw 32-bit words (4 per 16-byte vector) and converts a pair of
// elements at a time: 16-bit types hold a pair in one word, fp32 in two. (Copying the words into
// Vec<T, N> of 16-bit elements made the compiler split and repack them with PRMT.)
template <typename T>
__device__ inline float2 unpack_pair(const uint32_t* w, int p) {
  if constexpr (std::is_same_v<T, float>) {
    return make_float2(__uint_as_float(w[2 * p]), __uint_as_float(w[2 * p + 1]));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return make_float2(__uint_as_float(w[p] << 16), __uint_as_float(w[p] & 0xffff0000u));  // exact
  } else {
    __half2 h;
    memcpy(&h, &w[p], sizeof(h));
    return __half22float2(h);
  }
}
template <typename T>
__device__ inline void pack_pair(uint32_t* w, int p, float2 f) {  // round to nearest even, as from_float2
  if constexpr (std::is_same_v<T, float>) {
    w[2 * p] = __float_as_uint(f.x);
    w[2 * p + 1] = __float_as_uint(f.y);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 b = __float22bfloat162_rn(f);
    memcpy(&w[p], &b, sizeof(b));
  } else {
    const __half2 h = __float22half2_rn(f);
    memcpy(&w[p], &h, sizeof(h));
  }
}

// Pairwise sum of N (a power of two) values, unrolled at compile time (a loop whose inner trip count
// depends on the outer index was left rolled, the array in local memory).
template <int N>
__device__ inline float tree_sum(const float* a) {
  if constexpr (N == 1)
    return a[0];
  else
    return tree_sum<N / 2>(a) + tree_sum<N / 2>(a + N / 2);
}

// Decode shapes: one row per block of Warps warps; thread t holds 16-byte vectors t, t + 32 * Warps, ...
// of x and of w (up to VectorsPerThread each), every load issued before any use; one barrier, no
// shared-memory staging of x or w. Cache hints: x is read once (ld.global.cs, evict-first), w through the
// read-only path (ld.global.nc: every row and every call reuses it), y written once (st.global.cs).
// Full: the row is exactly 32 * Warps * VectorsPerThread vectors (no bounds checks, no zero fill).
// Split (vectorized_blocks_per_row, above): a row over Split consecutive blocks; each loads all of x's
// vectors for the sum of squares, its own part's first, and only its part's w, and writes its part of y.
// The sum is taken in the order of one block a row (a tree over the parts of the trees within each), so
// every block of a row computes the same rstd and the output is the same bits as unsplit.
// Launched with programmatic dependent launch (common/pdl.cuh), as inference runtimes
// launch their norms: it waits for the kernel ahead of it before its first load, then lets the next kernel
// launch, so the next one's launch and block dispatch overlap this one's work, which is most of the time of a
// kernel this small when kernels run back to back. The release comes after the wait, not before it: released
// first, a grid lets its dependent launch while it still waits, that one's dependent too, and so on, so a
// chain of these piles waiting grids onto the SMs, and the hot time per launch grows with the chain's length.
template <typename T, int VectorsPerThread, int Warps, bool Full, int Split = 1>
__global__ void __launch_bounds__(Warps * 32, 1)
    kernel_decode(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int hidden, float eps,
                  float inv_hidden) {
  constexpr int kThreads = Warps * 32, kPairs = 8 / static_cast<int>(sizeof(T));  // element pairs a vector
  static_assert(Split == 1 || (Full && VectorsPerThread % Split == 0), "a split row is whole vectors a part");
  constexpr int kOwn = VectorsPerThread / Split;  // the vectors a thread writes
  pdl_wait();              // before any access: the kernel ahead may write x or w, or read y
  pdl_launch_dependents();  // after the wait: one grid waiting behind this one at most (above)
  const int t = threadIdx.x;
  const int left = hidden / kVec16<T> - t;  // vectors of the row from this thread's first on
  const int part = Split == 1 ? 0 : static_cast<int>(blockIdx.x % Split);
  const int64_t base = static_cast<int64_t>(blockIdx.x / Split) * hidden;
  // Slot i holds the row's vector t + kThreads * v(i): the part's own vectors first (i < kOwn), then the
  // other parts' in turn, v(i) = ((part + i / kOwn) % Split) * kOwn + i % kOwn. Split 1: v(i) = i.
  auto vec_of = [&](int i) { return ((part + i / kOwn) % Split) * kOwn + i % kOwn; };
  const uint4* xt = reinterpret_cast<const uint4*>(x + base) + t;
  const uint4* wt = reinterpret_cast<const uint4*>(w) + t;
  uint4* yt = reinterpret_cast<uint4*>(y + base) + t;

  // Every load of the thread is issued before the first use of any of them.
  uint32_t xr[VectorsPerThread][4], wr[kOwn][4];
#pragma unroll
  for (int i = 0; i < VectorsPerThread; ++i) {
    const bool in = Full || i * kThreads < left;
    const int v = vec_of(i);
    const uint4 a = in ? load_evict_first(xt + v * kThreads) : make_uint4(0, 0, 0, 0);
    const uint4 b = in && i < kOwn ? load_read_only(wt + v * kThreads) : make_uint4(0, 0, 0, 0);
    xr[i][0] = a.x, xr[i][1] = a.y, xr[i][2] = a.z, xr[i][3] = a.w;
    if (i < kOwn) wr[i][0] = b.x, wr[i][1] = b.y, wr[i][2] = b.z, wr[i][3] = b.w;
  }
  // Sum of squares in fp32: two chains of kPairs per vector, then a tree over the vectors (not one
  // chain of VectorsPerThread * 8 dependent FMAs in bf16).
  float acc[VectorsPerThread];
#pragma unroll
  for (int i = 0; i < VectorsPerThread; ++i) {
    float a = 0.0f, b = 0.0f;
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
      const float2 f = unpack_pair<T>(xr[i], p);
      a = fmaf(f.x, f.x, a);
      b = fmaf(f.y, f.y, b);
    }
    acc[i] = a + b;
  }
  // A false dependency of the sum on every w load: zero is 0 (hidden < 2^31), which ptxas cannot
  // prove, so it must issue the w loads before the reduction. Without it ptxas placed them after the
  // shuffles (PTX order was right): w's memory round trip then followed the reduction. Adds +0.0f.
  const uint32_t zero = static_cast<uint32_t>(hidden) >> 31;
  uint32_t dep = 0;
#pragma unroll
  for (int i = 0; i < kOwn; ++i) dep |= wr[i][0] & zero;
  float thread_sum;
  if constexpr (Split == 1) {
    thread_sum = tree_sum<VectorsPerThread>(acc);
  } else {
    // The default's pairwise tree over v = 0..VectorsPerThread-1 is a tree over the parts of trees over
    // each part's kOwn: the parts' sums put back in part order give the same bits in every part's block.
    float by_slot[Split], by_part[Split];
#pragma unroll
    for (int m = 0; m < Split; ++m) by_slot[m] = tree_sum<kOwn>(acc + m * kOwn);
#pragma unroll
    for (int q = 0; q < Split; ++q) {
      by_part[q] = by_slot[0];
#pragma unroll
      for (int m = 1; m < Split; ++m)
        if ((part + m) % Split == q) by_part[q] = by_slot[m];
    }
    thread_sum = tree_sum<Split>(by_part);
  }
  // The sum over the block, the same bits in every thread; the only barrier.
  // 2 and 4 warps: shuffles only down to 16 / Warps partials a warp (lane l < 16 / Warps holds the sum over
  // the warp's lanes l mod 16 / Warps: three levels at 4 warps), the block's 16 partials through shared
  // memory, and every thread sums them as the same tree of depth 4. 8 and 16 warps: five levels, one partial
  // a warp, summed in warp order.
  float sum = thread_sum + __uint_as_float(dep);
  if constexpr (Warps == 2 || Warps == 4) {
    constexpr int kKeep = 16 / Warps;
#pragma unroll
    for (int o = 16; o >= kKeep; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    __shared__ __align__(16) float partial[16];
    if (t % 32 < kKeep) partial[t / 32 * kKeep + t % 32] = sum;
    __syncthreads();
    float p[16];
#pragma unroll
    for (int i = 0; i < 16; i += 4) {
      const float4 q = *reinterpret_cast<const float4*>(&partial[i]);
      p[i] = q.x, p[i + 1] = q.y, p[i + 2] = q.z, p[i + 3] = q.w;
    }
    sum = tree_sum<16>(p);
  } else {
    sum = warp_sum(sum);
    if constexpr (Warps > 1) {
      __shared__ __align__(16) float partial[Warps];
      if (t % 32 == 0) partial[t / 32] = sum;
      __syncthreads();
      sum = partial[0];
#pragma unroll
      for (int i = 1; i < Warps; ++i) sum += partial[i];
    }
  }
  const float rstd = rsqrtf(sum * inv_hidden + eps);
#pragma unroll
  for (int i = 0; i < kOwn; ++i) {
    if (Full || i * kThreads < left) {
      if constexpr (sizeof(T) == 2) {
        // Opaque until rstd is known: x and w are converted to fp32 here again, instead of the fp32
        // copies (x's from the sum of squares, w's hoisted above the reduction) living across it with
        // twice the registers (16 bf16 vectors a lane spilled so).
#pragma unroll
        for (int k = 0; k < 4; ++k) asm volatile("" : "+r"(xr[i][k]), "+r"(wr[i][k]) : "f"(rstd));
      }
      uint32_t out[4];
#pragma unroll
      for (int p = 0; p < kPairs; ++p) {
        const float2 xf = unpack_pair<T>(xr[i], p), wf = unpack_pair<T>(wr[i], p);
        pack_pair<T>(out, p, make_float2(xf.x * rstd * wf.x, xf.y * rstd * wf.y));
      }
      __stcs(yt + vec_of(i) * kThreads, make_uint4(out[0], out[1], out[2], out[3]));
    }
  }
}

// One instantiation per launch shape vectorized_config can pick: one warp of 1, 2 or 4 vectors a lane
// (rows of 32 to 128 vectors), or 2 to 16 warps of kDecodeVectors; each with and without bounds checks.
template <typename T>
void launch_decode(const T* x, const T* w, T* y, const Problem& p, const VectorizedConfig& c, cudaStream_t stream) {
  const int hidden = static_cast<int>(p.hidden);
  const float eps = static_cast<float>(p.eps), inv_hidden = 1.0f / static_cast<float>(hidden);
  const bool full = int64_t{c.threads_per_row} * c.vectors_per_thread * kVec16<T> == p.hidden;
  const int split = vectorized_blocks_per_row(c, p.rows, p.hidden, device_sm_count());
  auto go = [&](auto vectors, auto warps) {
    constexpr int kVectors = decltype(vectors)::value, kWarps = decltype(warps)::value;
    auto* kern = full ? kernel_decode<T, kVectors, kWarps, true> : kernel_decode<T, kVectors, kWarps, false>;
    if constexpr (kVectors == kDecodeVectors) {  // a split row is whole (vectorized_blocks_per_row)
      if (split == 2) kern = kernel_decode<T, kVectors, kWarps, true, 2>;
      if (split == 4) kern = kernel_decode<T, kVectors, kWarps, true, 4>;
    }
    launch_pdl(true, kern, dim3(static_cast<unsigned>(p.rows * split)), dim3(kWarps * 32), 0, stream,
               x, w, y, hidden, eps, inv_hidden);
  };
  static_assert(kDecodeVectors == 4, "the switch below instantiates 1, 2 and 4 vectors a lane");
  switch (c.threads_per_row / 32) {
    case 1:
      if (c.vectors_per_thread == 1)
        go(kInt<1>, kInt<1>);
      else if (c.vectors_per_thread == 2)
        go(kInt<2>, kInt<1>);
      else
        go(kInt<4>, kInt<1>);
      break;
    case 2: go(kInt<4>, kInt<2>); break;
    case 4: go(kInt<4>, kInt<4>); break;
    case 8: go(kInt<4>, kInt<8>); break;
    default: go(kInt<4>, kInt<16>); break;
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
  if (c.regime == VectorizedRegime::two_pass && p.rows > 0x7fffffff)
    return "rows > 2^31 - 1 (two-pass: one block per row)";
  return "";
}

template <typename T, int Vec>
void launch_typed(const Problem& p, const VectorizedConfig& c, cudaStream_t stream) {
  const auto* x = static_cast<const T*>(p.x);
  const auto* w = static_cast<const T*>(p.w);
  auto* y = static_cast<T*>(p.y);
  const int hidden = static_cast<int>(p.hidden);
  const float eps = static_cast<float>(p.eps);
  if constexpr (Vec == kVec16<T>) {
    if (c.regime == VectorizedRegime::decode) {
      launch_decode(x, w, y, p, c, stream);
      return;
    }
  }
  if (c.regime == VectorizedRegime::two_pass) {
    kernel_two_pass<T, Vec><<<static_cast<unsigned>(p.rows), c.block_threads, 0, stream>>>(x, w, y, hidden, eps);
    return;
  }
  const auto blocks = static_cast<unsigned>((p.rows + c.rows_per_block - 1) / c.rows_per_block);
  const int smem = c.stage_w ? hidden * static_cast<int>(sizeof(T)) : 0;
  // One lambda instantiation per kernel (depth x staging), so that its static opt-in belongs to that
  // kernel: keyed on the kernel's pointer type instead, every instantiation of one dtype shared a
  // single static, and only the first kernel to need more than 48 KB would have been opted in.
  auto go = [&](auto depth, auto stage) {
    auto* kern = kernel<T, Vec, decltype(depth)::value, decltype(stage)::value>;
    // Opt in once per kernel that stages w, to 64 KB (4096 vectors of 16 B): without it the kernel's own
    // __shared__ arrays and the staged w share 48 KB, which a 48 KB row (24576 16-bit elements) overflows.
    if (smem > 0) {
      static const cudaError_t opt_in = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
      SB_CUDA_CHECK(opt_in);
    }
    kern<<<blocks, c.block_threads, smem, stream>>>(x, w, y, p.rows, hidden, eps, c.threads_per_row);
  };
  auto by_depth = [&](auto stage) {
    switch (c.vectors_per_thread) {
      case 1: go(kInt<1>, stage); break;
      case 2: go(kInt<2>, stage); break;
      case 4: go(kInt<4>, stage); break;
      default: go(kInt<8>, stage); break;
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
