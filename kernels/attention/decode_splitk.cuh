// decode_splitk's device code and launch helpers shared by its translation units: decode_splitk_fma.cu
// (the FMA split kernel), decode_splitk_tc.cu (the tensor-core split kernel and its cluster merge) and
// decode_splitk.cu (the combine kernel, supports(), launch()). Everything here is internal to them: the
// anonymous namespace gives each unit its own copy, and only Problem and Plan cross between units.
#pragma once

#include <atomic>
#include <limits>
#include <mutex>
#include <type_traits>

#include "attention/decode_splitk.h"
#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/pdl.cuh"
#include "common/vec.cuh"

namespace sb::attention::decode_splitk {

// The split grid of each path, launched by launch() (decode_splitk.cu) for a supported problem.
void launch_fma(const Problem& p, const Plan& plan, cudaStream_t stream);  // decode_splitk_fma.cu
void launch_tc(const Problem& p, const Plan& plan, cudaStream_t stream);   // decode_splitk_tc.cu
// The tensor-core split grid over a paged cache (launch_paged), without clusters.
void launch_tc_paged(const Problem& p, const Plan& plan, const PagedKv& kv, cudaStream_t stream);

namespace {

constexpr int kCombineWarps = 4;  // one combine block per output row; its warps share the splits

// Opts `Kernel` in to `bytes` of dynamic shared memory (past the default 48 KB) and the largest shared
// memory carveout, once per kernel, device and size: the static is per kernel (the template argument is the
// kernel itself, not its type, which every split kernel shares) and holds the largest size set, so a call for
// more raises it and a call for less leaves it (a second, larger size for one kernel must not be skipped).
template <auto Kernel>
void opt_in_smem(int bytes) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> opted[kMaxDevices] = {};
  static std::mutex raise;
  int dev = 0;
  SB_CUDA_CHECK(cudaGetDevice(&dev));
  const bool tracked = dev >= 0 && dev < kMaxDevices;
  if (tracked && opted[dev].load(std::memory_order_acquire) >= bytes) return;
  const std::lock_guard<std::mutex> lock(raise);
  if (tracked && opted[dev].load(std::memory_order_relaxed) >= bytes) return;
  SB_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  SB_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     cudaSharedmemCarveoutMaxShared));
  if (tracked) opted[dev].store(bytes, std::memory_order_release);
}

struct Params {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* part_o;    // [rows_total][num_splits][head_dim], row = (b * q_len + i) * heads_q + h
  float* part_lse;  // [rows_total][num_splits], log2 domain; -inf for a split that saw no key
  int64_t heads_q, heads_kv, q_len, kv_len;
  int group;       // heads_q / heads_kv
  int rows;        // group * q_len query rows per (batch, kv head); row r = i * group + g
  int row_blocks;
  int num_splits;
  int64_t chunk_keys;
  bool causal;
  float q_scale;  // softmax scale * log2(e): scores come out in the log2 domain (exp2f)
};

// The tensor-core kernel's parameters over a paged cache (launch_paged): k and v are the page pools, key j of
// sequence b is row j % page_size of page block_table[b * max_pages + j / page_size], and the sequence is
// seq_lens[b] keys long (kv_len: the longest). A type of its own, not more fields of Params: a larger Params
// changes the contiguous kernels' code.
struct PagedParams : Params {
  const int32_t* seq_lens;
  const int32_t* block_table;
  int64_t page_size, max_pages;
};

// The paged kernel over an FP8 (e4m3) cache: K and V are e4m3 bytes whose values are the cache's times
// 1 / k_scale and 1 / v_scale. k_scale is folded into q_scale (scores are linear in K); v_scale multiplies
// the accumulated output (linear in V) before the warps' merge.
struct PagedFp8Params : PagedParams {
  float v_scale;
};

// The kernels' parameters for a supported problem and its plan; part_o and part_lse point into the
// workspace (laid out as workspace_bytes(plan, p) sizes it) when the plan has partials.
inline Params make_params(const Problem& p, const Plan& plan) {
  const int64_t rows_total = p.batch * p.q_len * p.heads_q;
  Params prm{};
  prm.q = p.q;
  prm.k = p.k;
  prm.v = p.v;
  prm.o = p.o;
  if (plan.num_splits > 1) {
    const std::size_t o_bytes = static_cast<std::size_t>(rows_total) * plan.num_splits * p.head_dim * sizeof(float);
    prm.part_o = static_cast<float*>(p.workspace);
    prm.part_lse = reinterpret_cast<float*>(static_cast<char*>(p.workspace) + (o_bytes + 255) / 256 * 256);
  }
  prm.heads_q = p.heads_q;
  prm.heads_kv = p.heads_kv;
  prm.q_len = p.q_len;
  prm.kv_len = p.kv_len;
  prm.group = static_cast<int>(p.heads_q / p.heads_kv);
  prm.rows = static_cast<int>(p.heads_q / p.heads_kv * p.q_len);
  prm.row_blocks = static_cast<int>(plan.row_blocks);
  prm.num_splits = plan.num_splits;
  prm.chunk_keys = plan.chunk_keys;
  prm.causal = p.causal;
  prm.q_scale = static_cast<float>(p.softmax_scale() * kLog2e);
  return prm;
}

// Calls f(T{}, std::integral_constant<int, D>{}) for p's 16-bit element type T and head_dim D (64, 128 or
// 256; supports() has refused the rest).
template <typename F>
void dispatch_16bit(const Problem& p, F&& f) {
  dispatch(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>) {
      throw std::invalid_argument("attention/decode_splitk: fp32 is not supported");
    } else {
      switch (p.head_dim) {
        case 64: f(T{}, std::integral_constant<int, 64>{}); break;
        case 128: f(T{}, std::integral_constant<int, 128>{}); break;
        default: f(T{}, std::integral_constant<int, 256>{}); break;
      }
    }
  });
}

// The split grid's blocks: one per (batch, unit of heads_per_block kv heads, row block, split).
inline unsigned split_blocks(const Problem& p, const Plan& plan) {
  return static_cast<unsigned>(p.batch * (p.heads_kv / plan.heads_per_block) * plan.row_blocks * plan.num_splits);
}

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The max to subtract: a running max of -inf (no visible key yet) subtracts 0, so exp2f(-inf - 0) = 0
// instead of exp2f(-inf + inf) = NaN.
__device__ inline float usable_max(float m) { return m == kNegInf ? 0.0f : m; }

// A split block's coordinates, from blockIdx.x = ((b * units + unit) * row_blocks + rb) * num_splits + split,
// where a unit is H adjacent kv heads (H = Plan::heads_per_block; units = heads_kv / H).
struct BlockCoords {
  int split, rb;
  int64_t unit, b;
};
template <int H>
__device__ inline BlockCoords block_coords(const Params& p) {
  // 32-bit unsigned division: a grid and its factors fit 32 bits, and the 64-bit form calls the division
  // routine ahead of the first K/V copy.
  unsigned bid = blockIdx.x;
  const unsigned splits = static_cast<unsigned>(p.num_splits), row_blocks = static_cast<unsigned>(p.row_blocks);
  const unsigned units = static_cast<unsigned>(p.heads_kv / H);
  BlockCoords c;
  c.split = static_cast<int>(bid % splits);
  bid /= splits;
  c.rb = static_cast<int>(bid % row_blocks);
  bid /= row_blocks;
  c.unit = bid % units;
  c.b = bid / units;
  return c;
}

// Column c of the W warps' running max s_m, sum s_l and accumulators s_acc, merged by log-sum-exp: the
// column's max, sum and unnormalized output at dim d (merged_out normalizes it, merged_lse gives the
// column's log2-sum-exp).
struct Merged {
  float out, max, sum;
};
// The column's max, each warp's weight 2^(m_w - max) and the weighted sum of the warps' l.
template <int W, int N>
__device__ inline void merged_weights(const float (&s_m)[W][N], const float (&s_l)[W][N], int c, float (&a)[W],
                                      float& mx, float& sum) {
  mx = kNegInf;
#pragma unroll
  for (int w = 0; w < W; ++w) mx = fmaxf(mx, s_m[w][c]);
  const float mu = usable_max(mx);
  sum = 0.0f;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    a[w] = exp2f(s_m[w][c] - mu);
    sum += s_l[w][c] * a[w];
  }
}
template <int W, int N, int D>
__device__ inline Merged merged_column(const float (&s_m)[W][N], const float (&s_l)[W][N],
                                       const float (&s_acc)[W][N][D], int c, int d) {
  float mx = kNegInf;
#pragma unroll
  for (int w = 0; w < W; ++w) mx = fmaxf(mx, s_m[w][c]);
  const float mu = usable_max(mx);
  float sum = 0.0f, out = 0.0f;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    const float a = exp2f(s_m[w][c] - mu);
    sum += s_l[w][c] * a;
    out += s_acc[w][c][d] * a;
  }
  return {out, mx, sum};
}
// sum >= 1 whenever a key was visible (the max key contributes exp2(0)); 0 means none: output 0.
__device__ inline float merged_out(const Merged& m) { return m.out * (m.sum > 0.0f ? 1.0f / m.sum : 0.0f); }
__device__ inline float merged_lse(const Merged& m) { return m.max == kNegInf ? kNegInf : m.max + log2f(m.sum); }
// Dims d .. d + 3 of column c, merged as merged_column and merged_out do (the same operations in the same
// order: the same bits), the column's weights and 1 / sum formed once for the four. merged_column keeps its
// own loop, the weights interleaved with the output, for the FMA kernels' register allocation.
template <int W, int N, int D>
__device__ inline float4 merged_column4(const float (&s_m)[W][N], const float (&s_l)[W][N],
                                        const float (&s_acc)[W][N][D], int c, int d, float& lse) {
  float a[W], mx, sum;
  merged_weights(s_m, s_l, c, a, mx, sum);
  lse = merged_lse({0.0f, mx, sum});
  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
  float out[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    out[k] = 0.0f;
#pragma unroll
    for (int w = 0; w < W; ++w) out[k] += s_acc[w][c][d + k] * a[w];
    out[k] *= inv;
  }
  return make_float4(out[0], out[1], out[2], out[3]);
}

// One output element after a split block's warps are done (merged_column), written to query row `row` as
// O (one split) or as this split's partial O and its lse.
template <typename T, int W, int N, int D>
__device__ inline void store_merged(const Params& p, const float (&s_m)[W][N], const float (&s_l)[W][N],
                                    const float (&s_acc)[W][N][D], int c, int d, int64_t row, int split) {
  const Merged m = merged_column(s_m, s_l, s_acc, c, d);
  const float out = merged_out(m);
  if (p.num_splits == 1) {
    static_cast<T*>(p.o)[row * D + d] = from_float<T>(out);
  } else {
    const int64_t slot = row * p.num_splits + split;
    p.part_o[slot * D + d] = out;
    if (d == 0) p.part_lse[slot] = merged_lse(m);
  }
}

// Plan::cluster_combine and Plan::paired_clusters: one block an SM (116 KB of shared memory each: two do not
// fit), so the scheduler never packs a cluster's blocks two to an SM and K and V stream through every SM the
// grid has.
constexpr int kClusterSmemBytes = 116 * 1024;


// The clustered split grid's launch configuration: `blocks` blocks of kTcThreads in clusters of `cluster`,
// kClusterSmemBytes of dynamic shared memory each. `attr` must outlive the launch.
cudaLaunchConfig_t cluster_config(unsigned blocks, int cluster, cudaStream_t stream, cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(kTcThreads);
  cfg.dynamicSmemBytes = kClusterSmemBytes;
  cfg.stream = stream;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}

// Launches Kernel over `blocks` blocks in clusters of `cluster` at kClusterSmemBytes (opted in first): the
// cluster merge's, the pairs' and the launch floor's split grids.
template <auto Kernel, typename... Args>
void launch_in_clusters(unsigned blocks, int cluster, cudaStream_t stream, const Args&... args) {
  opt_in_smem<Kernel>(kClusterSmemBytes);
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg = cluster_config(blocks, cluster, stream, attr);
  SB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, Kernel, args...));
  SB_LAUNCH_CHECK();
}

// The combine grid: one block of kCombineWarps warps per output row, programmatically dependent (PDL,
// common/pdl.cuh) on the split grid launched before it: the split kernel lets it launch early, and it
// waits for the split grid's completion (and memory flush) before reading the partials.
template <typename... Params_, typename... Args>
void launch_combine_grid(void (*kernel)(Params_...), int64_t rows_total, cudaStream_t stream, Args... args) {
  launch_pdl(true, kernel, dim3(static_cast<unsigned>(rows_total)), dim3(kCombineWarps * 32), 0,
             stream, args...);
}

}  // namespace
}  // namespace sb::attention::decode_splitk
