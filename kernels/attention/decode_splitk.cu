// decode_splitk: flash-decoding. A block reads one chunk of one kv head's K and V once (two adjacent kv
// heads at MHA), for every query row of that head's GQA group, with an fp32 online softmax; a sequence's
// chunks run in parallel (split-KV) and merge by log-sum-exp, in a combine kernel launched
// programmatically dependent (PDL) on the split grid or, for small plans, inside the split blocks'
// thread-block cluster; an unsplit one-wave GQA grid runs as clusters of two kv heads in step
// (Plan::paired_clusters). make_plan (decode_splitk.h) picks the splits, the rows a block and the kernel from
// the problem and the SM count. Two split kernels, each mapped in the comment above it: split_kernel_tc
// (GQA, 2-8 query rows of a kv head, head_dim 64/128: mma.sync) and split_kernel (MHA, head_dim 256: FMAs).
// Traffic: K and V once, Q and O once, 8 B per (row, split, dim) of partials (L2-resident). Floor, K+V
// bytes / the copy ceiling: 3.9 us at b1 KV 4096 (32/8 heads, d128: 16.8 MB), 1,010 us at b64 KV 16384.
// Constraints: fp16/bf16, head_dim 64/128/256, q_len <= 8, 16-byte aligned Q, K, V (supports()).
// Against manual, which writes and reads the score matrix (H200, bf16, cold): b1 KV 4096 34.2 -> 11.5 us
// (SDPA cuDNN 17.3), b64 KV 16384 2,102 -> 968 us (cuDNN 974), in results/h200/history/
// 2026-11-30_3c259c32afb2.json.gz. Each step's measurements, and what lost: results/h200/NOTES.md and
// results/h200/history/kernel_comment_logs.md.
#include <algorithm>
#include <atomic>
#include <climits>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <type_traits>

#include "attention/decode_splitk.h"
#include "attention/tiled_flash.cuh"
#include "common/check.h"
#include "common/device.h"
#include "common/dispatch.cuh"
#include "common/fastmath.cuh"
#include "common/mbarrier.cuh"
#include "common/pdl.cuh"
#include "common/reduce.cuh"
#include "common/vec.cuh"

namespace sb::attention::decode_splitk {

namespace {

constexpr int kWarps = kThreads / 32;
constexpr int kCombineWarps = 4;  // one combine block per output row; its warps share the splits

// H = Plan::heads_per_block: the H pieces of one key (H adjacent kv heads) lie on H * kLanesPerKey
// adjacent lanes of one warp.
template <int D, int R, int H>
struct Tile {
  static constexpr int kLanesPerKey = D / kDimsPerLane;  // 8, 16 or 32: one head's piece of a key
  static constexpr int kGroups = kThreads / (kLanesPerKey * H);
  static constexpr int kKeysPerLane = keys_per_lane(R);
  static constexpr int kKeys = kGroups * kKeysPerLane;
  static_assert(R <= kFmaMaxRows, "more rows a block are the tensor-core kernel's");
  static constexpr int kMinBlocks = fma_min_blocks(R, D);  // 64 or 128 registers a thread
  static constexpr int kStages = pipeline_stages(R, D);
  static constexpr int kStageVecs = 2 * kKeysPerLane * kThreads;  // uint4 per stage (K then V)
  static constexpr int kPipeBytes = kStages * kStageVecs * 16;
  static constexpr int kMergeBytes = kWarps * R * H * D * 4;     // s_acc, aliased onto the pipeline
  static_assert(H == 1 || kLanesPerKey * H <= 32, "a key's heads must lie within one warp");
  static constexpr int kSmemBytes = kPipeBytes > kMergeBytes ? kPipeBytes : kMergeBytes;
  static_assert(kSmemBytes * kMinBlocks <= 227 * 1024, "pipeline exceeds an SM's shared memory");
};

// Opts `Kernel` in to `bytes` of dynamic shared memory (past the default 48 KB) and the largest shared
// memory carveout, once per kernel, device and size: the static is per kernel (the template argument is the
// kernel itself, not its type, which every split kernel shares) and holds the largest size set, so a call for
// more raises it and a call for less leaves it (session 58: with a flag instead, a second, larger size for one
// kernel was skipped, and its launches failed with "invalid argument").
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

// Eight 16-bit elements (one 16-byte load) to fp32. bf16 -> fp32 is a shift; fp16 a conversion.
template <typename T>
__device__ inline void unpack8(const uint4& raw, float (&f)[8]) {
  const unsigned w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      f[2 * i] = __uint_as_float(w[i] << 16);
      f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    } else {
      f[2 * i] = __half2float(__ushort_as_half(static_cast<unsigned short>(w[i] & 0xffffu)));
      f[2 * i + 1] = __half2float(__ushort_as_half(static_cast<unsigned short>(w[i] >> 16)));
    }
  }
}

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The max to subtract: a running max of -inf (no visible key yet) subtracts 0, so exp2f(-inf - 0) = 0
// instead of exp2f(-inf + inf) = NaN.
__device__ inline float usable_max(float m) { return m == kNegInf ? 0.0f : m; }

__host__ __device__ constexpr int log2_exact(int n) { return n <= 1 ? 0 : 1 + log2_exact(n / 2); }
// Reduce-scatter steps of transposed_sum<N, kLanes>: until one value is left or the lanes run out.
__host__ __device__ constexpr int transposed_steps(int n, int lanes) {
  return log2_exact(n) < log2_exact(lanes) ? log2_exact(n) : log2_exact(lanes);
}

// The physical-to-logical slot mask of transposed_sum for lane c (< kLanes) of a key group.
template <int N, int kLanes>
__device__ inline int transposed_mask(int c) {
  constexpr int kSteps = transposed_steps(N, kLanes);
  int mask = 0;
#pragma unroll
  for (int j = 0; j < kSteps; ++j)
    if (c & (kLanes >> (j + 1))) mask |= N >> (j + 1);
  return mask;
}

// Sums N values over each aligned group of kLanes lanes, every lane getting all N sums, with about half
// the shuffles of N butterflies: a reduce-scatter (step j pairs slot i with slot i + N/2^(j+1) across
// lane bit kLanes/2^(j+1): each lane sends one half and keeps the other), plain butterflies once one
// value is left, then the mirror-image all-gather. No selects: lane c's slot p holds logical value
// p ^ transposed_mask(c), i.e. the caller computes its partial sums in that lane-permuted order, and
// gets the sums back in the same order. Every lane of a group ends with the same bits for a value.
// The inner loops run to N / 2 with a guard: a bound that depends on j left them rolled at N = 16 (8 rows)
// and put v in local memory.
template <int N, int kLanes>
__device__ inline void transposed_sum(float (&v)[N]) {
  constexpr int kSteps = transposed_steps(N, kLanes);
  constexpr int kHeld = N >> kSteps;
#pragma unroll
  for (int j = 0; j < kSteps; ++j) {
    const int half = N >> (j + 1), off = kLanes >> (j + 1);
#pragma unroll
    for (int i = 0; i < N / 2; ++i)
      if (i < half) v[i] += __shfl_xor_sync(0xffffffffu, v[i + half], off);
  }
#pragma unroll
  for (int off = kLanes >> (kSteps + 1); off > 0; off /= 2)
#pragma unroll
    for (int i = 0; i < kHeld; ++i) v[i] += __shfl_xor_sync(0xffffffffu, v[i], off);
#pragma unroll
  for (int j = kSteps - 1; j >= 0; --j) {
    const int n = N >> (j + 1), off = kLanes >> (j + 1);
#pragma unroll
    for (int i = 0; i < N / 2; ++i)
      if (i < n) v[i + n] = __shfl_xor_sync(0xffffffffu, v[i], off);
  }
}

// A split block's coordinates, from blockIdx.x = ((b * units + unit) * row_blocks + rb) * num_splits + split,
// where a unit is H adjacent kv heads (H = Plan::heads_per_block; units = heads_kv / H).
struct BlockCoords {
  int split, rb;
  int64_t unit, b;
};
template <int H>
__device__ inline BlockCoords block_coords(const Params& p) {
  // 32-bit unsigned division: a grid and its factors fit 32 bits, and the 64-bit form's calls to the
  // division routine sat ahead of the first K/V copy (session 21's trace).
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
// order: the same bits), the column's weights and 1 / sum formed once for the four. (merged_column keeps
// its own loop, the weights interleaved with the output: through merged_weights, the FMA kernels' register
// allocation changed, session 16.)
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

// The FMA split kernel, for the plans without tensor cores (MHA, head_dim 256). A 256-thread block =
// (batch, H adjacent kv heads, row block of <= 8 query rows, split), where H = Plan::heads_per_block is 2
// at MHA with q_len <= 2, even heads_kv and head_dim <= 128, else 1.
// head_dim / 8 lanes hold one head's piece of a key row, 16 B each (16 lanes = 256 B at d128), and
// H x head_dim / 8 adjacent lanes of a warp the key's H pieces (512 contiguous bytes for a d128 pair); the
// block's 256 / (H x head_dim / 8) key groups take keys t + u * groups + group of a tile (u < 2: 32 keys
// at d128, 16 with H = 2; always 16 KB of K and V). Each group keeps its own running max, sum and 8-dim
// accumulators per row. Q K^T: 8 FMAs a lane, then transposed_sum reduce-scatters a lane's 2 x R partial
// dots over the key's lanes and all-gathers the sums (each lane holds rows and keys in a lane-permuted
// order, so no selects): 15 shuffles and 8 adds a tile at 4 rows, 5 shuffles at 1 row, where a butterfly
// per dot takes 32 and 32, or 8. The main loop's weights are ex2.approx.ftz (one MUFU.EX2; weights below
// 2^-126 of the row max flush to 0). K and V reach shared memory through a cp.async pipeline of
// pipeline_stages(R, D) tiles: each thread copies exactly the 16-byte pieces it later reads (no block
// barrier in the loop), reads a tile's pieces into registers, refills that stage with the tile `stages`
// ahead, then computes, so every stage is in flight while a tile is computed (3 stages of 16 KB in each of
// 4 blocks an SM for one-row blocks at head_dim <= 128, else 4 in each of 2-3). Groups merge by shuffles,
// warps through shared memory (reusing the pipeline's).
template <typename T, int D, int R, int H>
__global__ void __launch_bounds__(kThreads, Tile<D, R, H>::kMinBlocks) split_kernel(const Params p) {
  using Shape = Tile<D, R, H>;
  constexpr int kLanes = Shape::kLanesPerKey, kGroups = Shape::kGroups, kTileKeys = Shape::kKeys;
  constexpr int U = Shape::kKeysPerLane, S = Shape::kStages;
  extern __shared__ uint4 smem[];  // the pipeline: [stage][K, V][u][thread]; after the loop, s_acc
  auto& s_acc = *reinterpret_cast<float (*)[kWarps][H * R][D]>(smem);  // [warp][head * R + row]
  __shared__ float s_m[kWarps][H * R], s_l[kWarps][H * R];

  pdl_launch_dependents();
  const BlockCoords bc = block_coords<H>(p);
  const int split = bc.split, rb = bc.rb;
  const int64_t kvu = bc.unit, b = bc.b;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int c = tid % kLanes;                // this lane's 8 dims: [c * 8, c * 8 + 8)
  const int hs = (tid / kLanes) % H;         // this lane's kv head within the block
  const int64_t kvh = kvu * H + hs;          // ... and in the problem
  const int group = tid / (kLanes * H);      // this lane's key group
  // Transposed Q.K: this lane's register row r is block row r ^ rmask, its key slot u is key u ^ umask of
  // the tile (slot u * R + r of transposed_sum). Lane c = 0 of a head has both masks 0.
  const int tmask = transposed_mask<U * R, kLanes>(c);
  const int rmask = tmask % R, umask = tmask / R;

  // Q rows of this block, pre-scaled, 8 dims per lane; lim[r] = last key row r may see (-1: none).
  float qf[R][8];
  int lim[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int rg = rb * R + (r ^ rmask);
    lim[r] = -1;
#pragma unroll
    for (int e = 0; e < 8; ++e) qf[r][e] = 0.0f;
    if (rg < p.rows) {
      const int64_t i = rg / p.group, h = kvh * p.group + rg % p.group;
      const int64_t last = p.causal ? i + p.kv_len - p.q_len : p.kv_len - 1;  // bottom-right causal
      lim[r] = static_cast<int>(last < -1 ? -1 : last);
      const T* src = static_cast<const T*>(p.q) + ((b * p.q_len + i) * p.heads_q + h) * D + c * kDimsPerLane;
      unpack8<T>(*reinterpret_cast<const uint4*>(src), qf[r]);
#pragma unroll
      for (int e = 0; e < 8; ++e) qf[r][e] *= p.q_scale;
    }
  }

  const int64_t first = static_cast<int64_t>(split) * p.chunk_keys;
  const int key_begin = static_cast<int>(first < p.kv_len ? first : p.kv_len);
  const int key_end = static_cast<int>(first + p.chunk_keys < p.kv_len ? first + p.chunk_keys : p.kv_len);
  const int64_t key_stride = p.heads_kv * D;
  const int64_t head_offset = (b * p.kv_len * p.heads_kv + kvh) * D + c * kDimsPerLane;
  const T* kbase = static_cast<const T*>(p.k) + head_offset;
  const T* vbase = static_cast<const T*>(p.v) + head_offset;
  const int ntiles = key_end > key_begin ? (key_end - key_begin + kTileKeys - 1) / kTileKeys : 0;
  // Copies tile i (if it exists) into stage `st`, this thread's pieces only; always commits a group so
  // that group i holds tile i.
  auto issue = [&](int i, int st) {
    if (i < ntiles) {
      const int t = key_begin + i * kTileKeys;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int j = t + u * kGroups + group;
        const bool valid = j < key_end;
        const int64_t off = static_cast<int64_t>(valid ? j : t) * key_stride;
        cp_async_16_zfill(&smem[(st * 2 * U + u) * kThreads + tid], kbase + off, valid);
        cp_async_16_zfill(&smem[(st * 2 * U + U + u) * kThreads + tid], vbase + off, valid);
      }
    }
    cp_async_commit();
  };
  // Rows past p.rows (q = 0) never write; the smallest limit of the real rows decides whether a tile
  // needs masking at all.
  int lim_min = INT_MAX;
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (rb * R + (r ^ rmask) < p.rows) lim_min = min(lim_min, lim[r]);

  float m[R], l[R], acc[R][8];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    m[r] = kNegInf;
    l[r] = 0.0f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[r][e] = 0.0f;
  }

#pragma unroll
  for (int i = 0; i < S; ++i) issue(i, i);
  int st = 0;
  for (int i = 0; i < ntiles; ++i) {  // block-uniform trip count: shuffles are safe
    const int t = key_begin + i * kTileKeys;
    cp_async_wait<S - 1>();  // group i (tile i) has landed; tiles i+1 .. i+S-1 stay in flight
    uint4 kr[U], vr[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      kr[u] = smem[(st * 2 * U + (u ^ umask)) * kThreads + tid];
      vr[u] = smem[(st * 2 * U + U + (u ^ umask)) * kThreads + tid];
    }
    issue(i + S, st);  // this thread's own pieces of stage st are in registers: refill it
    st = st + 1 == S ? 0 : st + 1;
    const bool full = t + kTileKeys <= key_end && t + kTileKeys - 1 <= lim_min;  // no key masked
    float s[U][R];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float kf[8];
      unpack8<T>(kr[u], kf);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float dot = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) dot = fmaf(qf[r][e], kf[e], dot);
        s[u][r] = dot;
      }
    }
    float flat[U * R];  // the partial dots summed over the key's lanes, in this lane's permuted slots
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int r = 0; r < R; ++r) flat[u * R + r] = s[u][r];
    transposed_sum<U * R, kLanes>(flat);
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int r = 0; r < R; ++r) s[u][r] = flat[u * R + r];
    if (!full) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int j = t + (u ^ umask) * kGroups + group;
#pragma unroll
        for (int r = 0; r < R; ++r)
          if (j >= key_end || j > lim[r]) s[u][r] = kNegInf;
      }
    }

#pragma unroll
    for (int r = 0; r < R; ++r) {
      float mt = m[r];
#pragma unroll
      for (int u = 0; u < U; ++u) mt = fmaxf(mt, s[u][r]);
      const float mu = usable_max(mt);
      // Rescale only when some lane's max grew (rare after the first tiles); elsewhere alpha is 1, or
      // 0 times an accumulator that is still 0: skipping is exact. The loop's weights use ex2_approx
      // (one MUFU.EX2); the merges after the loop keep exp2f.
      if (__any_sync(0xffffffffu, mt > m[r])) {
        const float alpha = ex2_approx(m[r] - mu);
        l[r] *= alpha;
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[r][e] *= alpha;
      }
      m[r] = mt;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        s[u][r] = ex2_approx(s[u][r] - mu);
        l[r] += s[u][r];
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float vf[8];
      unpack8<T>(vr[u], vf);
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[r][e] = fmaf(s[u][r], vf[e], acc[r][e]);
    }
  }
  cp_async_wait<0>();  // only empty groups can remain; the merge below reuses the pipeline's memory

  // Merge the key groups of a warp (lanes kLanes * H apart), then the warps through shared memory.
#pragma unroll
  for (int off = kLanes * H; off < 32; off *= 2) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float mo = __shfl_xor_sync(0xffffffffu, m[r], off), lo = __shfl_xor_sync(0xffffffffu, l[r], off);
      const float mx = fmaxf(m[r], mo), mu = usable_max(mx);
      const float a = exp2f(m[r] - mu), bo = exp2f(mo - mu);
      l[r] = l[r] * a + lo * bo;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[r][e] = acc[r][e] * a + __shfl_xor_sync(0xffffffffu, acc[r][e], off) * bo;
      m[r] = mx;
    }
  }
  __syncthreads();  // every thread is done with its pipeline stages
  if (lane < kLanes * H) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float4* dst = reinterpret_cast<float4*>(&s_acc[warp][hs * R + (r ^ rmask)][c * kDimsPerLane]);
      dst[0] = make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
      dst[1] = make_float4(acc[r][4], acc[r][5], acc[r][6], acc[r][7]);
    }
  }
  if (lane < kLanes * H && c == 0) {  // lane 0 (and kLanes: the 2nd head), whose rmask is 0
#pragma unroll
    for (int r = 0; r < R; ++r) {
      s_m[warp][hs * R + r] = m[r];
      s_l[warp][hs * R + r] = l[r];
    }
  }
  __syncthreads();
  for (int idx = tid; idx < H * R * D; idx += kThreads) {
    const int hr = idx / D, d = idx % D, r = hr % R, rg = rb * R + r;  // hr = head in block * R + row
    const int64_t kvh_out = kvu * H + hr / R;
    if (rg >= p.rows) continue;
    const int64_t row = (b * p.q_len + rg / p.group) * p.heads_q + kvh_out * p.group + rg % p.group;
    store_merged<T>(p, s_m, s_l, s_acc, hr, d, row, split);
  }
}

// The tensor-core split kernel, for GQA row blocks (2, 4 or 8 query rows of one kv head) at head_dim 64
// or 128 (Plan::tensor_cores): cuDNN's shape of block as Nsight Compute showed it (128 threads, two blocks
// an SM, few instructions per byte). 4 warps; a tile is kTcTileKeys = 64 keys, warp w owns keys
// 16w .. 16w + 15 of every tile with its own cp.async pipeline of tc_stages() stages (no block barrier in
// the loop). The loop computes S^T = K Q^T and O^T += V^T P^T by mma.sync m16n8k16 (fp32 accumulators): the
// warp's 16 keys (and 16 head dims at a time) are the MMA's 16 rows, the block's R <= 8 query rows its 8
// columns (columns >= R are zero-filled padding). So a warp's 16 keys take D / 8 MMAs (D / 16 for each
// product), Q^T's fragments stay in registers for the whole loop (D / 8 of them), K and V^T arrive by
// XOR-swizzled ldmatrix (.trans for V), and P^T goes from the S^T accumulators to the B operand of the P V
// MMA by two movmatrix.trans a tile. Each lane holds query rows 2 t4 and 2 t4 + 1 (t4 = lane % 4): a row's
// softmax runs over the 8 lanes of its t4. Precision: Q enters the MMA as given (16-bit, exact) and the
// softmax scale x log2 e multiplies the fp32 scores after it, so a score is as exact as fp32 accumulation
// makes it at any scale and in fp16 too (session 6's candidate rounded the *scaled* Q to 16 bits and failed
// the +-5e5-logit tests); P = 2^(s - m) in [0, 1] enters the P V MMA rounded to the dtype, as the
// same-dtype reference and FlashAttention round it (l sums the fp32 weights). Q reaches shared memory by
// cp.async in the K/V pipeline's first group; the Q K^T sum runs as two accumulator chains (even and odd
// 16-dim steps). Each version's measurements: history/kernel_comment_logs.md.
// The fragment and swizzle index math is modelled on the CPU by tests/scripts/test_decode_tc_fragments.py.
namespace tc {
using tiled_flash::ldmatrix_x4;
using tiled_flash::ldmatrix_x4_trans;
using tiled_flash::mma_16816;
using tiled_flash::pack2;
using tiled_flash::smem_addr;
constexpr int kTcWarps = kTcThreads / 32, kWarpKeys = kTcWarpKeys, kTileKeys = kTcTileKeys;
constexpr int kQkChains = 2;  // independent Q K^T accumulator chains (even and odd k-steps)
template <int D>
struct Shape {
  static constexpr int kStages = tc_stages(D);
  static constexpr int kWarpStageVecs = tc_warp_stage_bytes(D) / 16;  // uint4 per warp-stage: K then V
  static constexpr int kSmemBytes = tc_smem_bytes(D);
  // Two blocks an SM (__launch_bounds__ below): dynamic + static shared memory + 1 KB reserved each.
  static_assert(2 * (kSmemBytes + 2 * kTcWarps * 8 * 4 + 1024) <= 228 * 1024, "two blocks must fit an SM");
};
// Row `row` (< 16), 16-byte chunk `chunk` of a [rows][D] 16-bit tile, XOR-swizzled over 8 chunks so that
// ldmatrix's 8 row reads of one chunk column hit 8 different bank groups.
template <int D>
__device__ inline int swz(int row, int chunk) { return row * (D / 8) + (chunk ^ (row & 7)); }
// movmatrix.trans: an 8 x 8 16-bit matrix held in the MMA accumulator layout (lane: row lane / 4, columns
// 2 (lane % 4), + 1) comes back transposed in the same layout.
__device__ inline uint32_t movmatrix_trans(uint32_t a) {
  uint32_t d;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(d) : "r"(a));
  return d;
}
}  // namespace tc

// Cluster merge (Plan::cluster_combine): the num_splits blocks of a unit are one cluster (rank = split).
// Row n of the block's R merged rows belongs to block n % num_splits (its owner), which receives every
// split's copy of it in a buffer past the pipeline and Q (shared memory no other phase uses: the cluster
// variant has kClusterSmemBytes, the pipeline and Q tc_smem_bytes(D)), behind an mbarrier. Each thread
// merges 4 dims of a row across the block's warps and sends them with st.async, which completes its bytes
// on the owner's mbarrier; the owner, having announced the bytes it expects, waits on its own mbarrier and
// merges its rows from its own shared memory in split order (fixed: bit-identical runs). Only an owner's
// memory is written remotely, and it exits only after every byte has landed, so no barrier keeps memory
// alive; the one cluster barrier, arrived at on entry (after the mbarrier's init) and waited on before the
// first st.async, guarantees that every target runs and has initialized its mbarrier. No release at cluster
// scope follows the loop (cluster.sync() compiles to MEMBAR.ALL.GPU + the barrier: the pull merge this
// replaced waited twice, the second time for its output stores; history/kernel_comment_logs.md, session 14).
// Receive buffer: the owner's j-th row (n = owner + j num_splits): [j][split][D] values, then [j][split]
// lse: at most (R + num_splits - 1) (D + 1) floats.
__host__ __device__ constexpr int cluster_recv_floats(int rows, int d) { return (rows + kMaxClusterSplits - 1) * (d + 1); }
inline constexpr int kRecvOffset = 16;  // the mbarrier (8 bytes), then the buffer, 16-byte aligned

__device__ inline void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory"); }
__device__ inline void cluster_wait() { asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory"); }
__device__ inline unsigned map_rank(unsigned addr, int rank) {
  unsigned out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(out) : "r"(addr), "r"(rank));
  return out;
}
__device__ inline void st_async_v4(unsigned addr, float4 v, unsigned bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(addr),
               "r"(__float_as_uint(v.x)), "r"(__float_as_uint(v.y)), "r"(__float_as_uint(v.z)), "r"(__float_as_uint(v.w)),
               "r"(bar)
               : "memory");
}
__device__ inline void st_async_b32(unsigned addr, float v, unsigned bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];\n" ::"r"(addr),
               "r"(__float_as_uint(v)), "r"(bar)
               : "memory");
}
__device__ inline void fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// The owner's expected bytes: every split's values and lse of each of its real rows (n < rows_left, the
// rows of its row block before p.rows). Announced by thread 0 once the block's first barrier has passed
// (the mbarrier's init is then ordered before it for every thread; right after the init, compute-sanitizer
// racecheck reports the two as a race), well before the merge, so that none of its arithmetic is on the
// merge's path.
template <int N, int D>
__device__ inline unsigned cluster_expected_bytes(int split, int splits, int rows_left) {
  unsigned bytes = 0;
  for (int n = split; n < N && n < rows_left; n += splits) bytes += static_cast<unsigned>(splits) * (D + 1) * 4u;
  return bytes;
}

// base: the mbarrier, initialized on entry (its cluster barrier arrived at) and its expected bytes
// announced (cluster_expected_bytes); column(r, d4, lse) -> the block's merged row r at dims 4 d4 .. + 3,
// and the row's lse; rows_left: the block's rows before p.rows (row r is real iff r < rows_left); row_of(r):
// row r's output row. The row tests use rows_left, not row_of, whose division by p.group stays off the path
// from the cluster wait to the last st.async (session 15: 607 -> 186 SASS instructions on that path).
template <typename T, int N, int D, int kBlockThreads, typename Column, typename RowOf>
__device__ inline void cluster_merge(const Params& p, char* base, int split, Column column, RowOf row_of,
                                     int rows_left) {
  const int splits = p.num_splits;
  const unsigned bar = tc::smem_addr(base), recv = bar + kRecvOffset;
  const float* recv_f = reinterpret_cast<const float*>(base + kRecvOffset);
  const int owned = (N - split + splits - 1) / splits;  // rows split, split + splits, ... < N
  cluster_wait();  // every block of the cluster runs and has initialized its mbarrier
  constexpr int kGroups = N * D / 4, kIters = (kGroups + kBlockThreads - 1) / kBlockThreads;
#pragma unroll
  for (int it = 0; it < kIters; ++it) {  // unrolled: the groups' shared loads and exp2 overlap
    const int q = static_cast<int>(threadIdx.x) + it * kBlockThreads;
    if (q >= kGroups) break;
    const int n = q / (D / 4), d4 = q % (D / 4);
    if (n >= rows_left) continue;
    const int owner = n % splits, j = n / splits;
    const int owner_rows = (N - owner + splits - 1) / splits;
    float lse;
    const float4 v = column(n, d4, lse);
    const unsigned obar = map_rank(bar, owner), orecv = map_rank(recv, owner);
    st_async_v4(orecv + 4u * static_cast<unsigned>((j * splits + split) * D + 4 * d4), v, obar);
    if (d4 == 0) st_async_b32(orecv + 4u * static_cast<unsigned>(owner_rows * splits * D + j * splits + split), lse, obar);
  }
  if (owned == 0) return;
  const int64_t first_row = row_of(split);  // formed before the wait (the owner's first row, j = 0)
  mbar_wait_parity(bar, 0);  // every split's copy of this block's rows has landed
  const float* recv_lse = recv_f + owned * splits * D;
  for (int idx = static_cast<int>(threadIdx.x); idx < owned * D; idx += kBlockThreads) {
    const int j = idx / D, d = idx % D, n = split + j * splits;
    const int64_t row = j == 0 ? first_row : row_of(n);
    if (row < 0) continue;
    float lse[kMaxClusterSplits], x[kMaxClusterSplits];
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s) {
      lse[s] = s < splits ? recv_lse[j * splits + s] : kNegInf;
      x[s] = s < splits ? recv_f[(j * splits + s) * D + d] : 0.0f;
    }
    float mx = kNegInf;
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s) mx = fmaxf(mx, lse[s]);
    const float mu = usable_max(mx);
    float sum = 0.0f, out = 0.0f;
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s) {
      const float w = exp2f(lse[s] - mu);
      sum += w;
      out += w > 0.0f ? w * x[s] : 0.0f;
    }
    static_cast<T*>(p.o)[row * D + d] = from_float<T>(out * (sum > 0.0f ? 1.0f / sum : 0.0f));
  }
}

// kCluster: Plan::cluster_combine's kernel (its splits merge in distributed shared memory). kPaired:
// Plan::paired_clusters' (a cluster of kPairBlocks unsplit blocks, adjacent kv heads of one sequence, that
// pass a cluster barrier every tile: arrive after tile i's wait, wait before tile i + 1's, so no block of the
// pair gets more than two tiles ahead; every block of the pair has the same ntiles).
template <typename T, int D, int R, bool kCluster = false, bool kPaired = false>
__global__ void __launch_bounds__(kTcThreads, 2) split_kernel_tc(const Params p) {
  static_assert(R <= 8, "the query rows are the MMA's 8 columns: at most 8");
  using namespace tc;
  constexpr int S = Shape<D>::kStages, kChunks = D / 8, kOTiles = D / 16;  // O^T's m16 tiles of head dims
  extern __shared__ uint4 smem[];
  uint4* qs = smem + kTcWarps * S * Shape<D>::kWarpStageVecs;  // [16 rows][D] (16-byte chunks)
  auto& s_acc = *reinterpret_cast<float (*)[kTcWarps][R][D]>(smem);  // after the loop, over the pipeline
  __shared__ float s_m[kTcWarps][R], s_l[kTcWarps][R];

  if constexpr (kCluster) {  // cluster_merge's mbarrier, then its cluster barrier's arrival
    if (threadIdx.x == 0) {
      mbar_init(smem_addr(reinterpret_cast<char*>(smem) + Shape<D>::kSmemBytes), 1);
      fence_mbar_init();
    }
    cluster_arrive_relaxed();
  }
  pdl_launch_dependents();
  const BlockCoords bc = block_coords<1>(p);  // one kv head a block
  const int split = bc.split, rb = bc.rb;
  const int64_t kvh = bc.unit, b = bc.b;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, g = lane / 4, t4 = lane % 4;

  const int64_t first = static_cast<int64_t>(split) * p.chunk_keys;
  const int key_begin = static_cast<int>(first < p.kv_len ? first : p.kv_len);
  const int key_end = static_cast<int>(first + p.chunk_keys < p.kv_len ? first + p.chunk_keys : p.kv_len);
  const int64_t key_stride = p.heads_kv * D;
  const T* kbase = static_cast<const T*>(p.k) + (b * p.kv_len * p.heads_kv + kvh) * D;
  const T* vbase = static_cast<const T*>(p.v) + (b * p.kv_len * p.heads_kv + kvh) * D;
  const int ntiles = key_end > key_begin ? (key_end - key_begin + kTileKeys - 1) / kTileKeys : 0;
  uint4* wstage = smem + warp * S * Shape<D>::kWarpStageVecs;  // this warp's stages: [stage][K, V][16][D]
  // K and V copies, the address arithmetic out of the kSteps warp-wide steps (session 13: b1 KV 4096 0.9 us
  // faster hot; history/kernel_comment_logs.md). Lane (cq, cc) = (lane / kChunks, lane % kChunks) copies
  // chunk cc of tile rows s + kSteps cq, s < kSteps. Then
  // - the source is a per-lane base (key_begin's row, chunk cc: always a valid address) plus the row's
  //   offset from key_begin in bytes: one 64-bit product a call and an add a step, not
  //   (valid ? j : key_begin) * key_stride + 8 c formed afresh for each of 2 x kSteps copies;
  // - the slot swz(row, cc) = row kChunks + (cc ^ (row & 7)) has row & 7 = s | ((kSteps cq) & 7) (disjoint
  //   bits: s < kSteps, kSteps in {4, 8}), so its byte offset in the stage is
  //   (lane_slot ^ 16 s) + 16 s kChunks with lane_slot = 16 (kSteps cq kChunks + (cc ^ ((kSteps cq) & 7))),
  //   the same for every tile.
  // tests/scripts/test_decode_tc_fragments.py checks that the steps write every slot of a stage once with
  // the chunk swz() puts there.
  constexpr int kSteps = kWarpKeys * kChunks / 32;
  static_assert(32 % kChunks == 0 && (kSteps == 4 || kSteps == 8), "whole rows a step; row & 7 splits as above");
  const int cq = lane / kChunks, cc = lane % kChunks;
  const unsigned lane_slot = 16u * static_cast<unsigned>(kSteps * cq * kChunks + (cc ^ ((kSteps * cq) & 7)));
  const int64_t row_bytes = key_stride * static_cast<int64_t>(sizeof(T));
  const char* klane = reinterpret_cast<const char*>(kbase + static_cast<int64_t>(key_begin) * key_stride + cc * 8);
  const char* vlane = reinterpret_cast<const char*>(vbase + static_cast<int64_t>(key_begin) * key_stride + cc * 8);
  const unsigned stage0 = smem_addr(wstage);
  auto copy_tile = [&](int i, int st) {
    if (i < ntiles) {
      const int r0 = i * kTileKeys + warp * kWarpKeys + kSteps * cq;  // step 0's row, from key_begin
      const int left = key_end - key_begin - r0;                      // step s copies a key iff s < left
      int64_t off = static_cast<int64_t>(r0) * row_bytes;
      const unsigned stage = stage0 + 16u * static_cast<unsigned>(st * Shape<D>::kWarpStageVecs);
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        const bool valid = s < left;
        const int64_t o = valid ? off : 0;
        const unsigned dst = stage + ((lane_slot ^ (16u * s)) + 16u * s * kChunks);
        cp_async_16_zfill(dst, klane + o, valid);
        cp_async_16_zfill(dst + 16u * kWarpKeys * kChunks, vlane + o, valid);
        off += row_bytes;
      }
    }
  };
  auto issue = [&](int i, int st) {
    copy_tile(i, st);
    cp_async_commit();
  };
  // Prologue order: tile 0's K/V copies leave first (the cold launch's first DRAM latency starts there),
  // then Q's, one commit for both (group 0); the other stages; then the row limits, which nothing before
  // needs.
  copy_tile(0, 0);
  // Q: rows rb * R .. + R - 1 of this kv head's group as given; rows >= R or past p.rows are zero-filled
  // from a valid address, and only a real row's address is formed (the padding rows, all of the second
  // pass at d128, skip the division).
  static_assert(16 * kChunks % kTcThreads == 0, "whole passes over Q's 16 staged rows");
#pragma unroll
  for (int it = 0; it < 16 * kChunks / kTcThreads; ++it) {
    const int idx = tid + it * kTcThreads;
    const int row = idx / kChunks, chunk = idx % kChunks, rg = rb * R + row;
    const bool valid = row < R && rg < p.rows;
    const T* src = static_cast<const T*>(p.q);  // a valid address, not read when !valid
    if (valid) {
      const int64_t i = rg / p.group, h = kvh * p.group + rg % p.group;
      src += ((b * p.q_len + i) * p.heads_q + h) * D + chunk * 8;
    }
    cp_async_16_zfill(&qs[swz<D>(row, chunk)], src, valid);
  }
  cp_async_commit();
#pragma unroll
  for (int i = 1; i < S; ++i) issue(i, i);
  int lim[2];  // the last key rows 2 t4 and 2 t4 + 1 may see (-1: none, or padding)
#pragma unroll
  for (int h2 = 0; h2 < 2; ++h2) {
    const int row = 2 * t4 + h2, rg = rb * R + row;
    lim[h2] = -1;
    if (row < R && rg < p.rows) {
      const int64_t i = rg / p.group;
      const int64_t last = p.causal ? i + p.kv_len - p.q_len : p.kv_len - 1;
      lim[h2] = static_cast<int>(last < -1 ? -1 : last);
    }
  }
  cp_async_wait<S - 1>();  // group 0: this thread's Q copies (and its tile 0)
  __syncthreads();         // all of Q is in shared memory
  if constexpr (kCluster)  // past the block's first barrier (see cluster_expected_bytes)
    if (tid == 0)
      mbar_arrive_expect_tx(smem_addr(reinterpret_cast<char*>(smem) + Shape<D>::kSmemBytes),
                            cluster_expected_bytes<R, D>(split, p.num_splits, p.rows - rb * R));

  // Rows 2 t4 and 2 t4 + 1 (this lane's columns of S^T and O^T): running max m, sum l (of this lane's keys
  // only until the end), O^T's D / 16 tiles of 16 head dims (o[n][r]: dim 16 n + g, o[n][2 + r]: + 8).
  float m[2] = {kNegInf, kNegInf}, l[2] = {0.0f, 0.0f};
  float o[kOTiles][4];
#pragma unroll
  for (int n = 0; n < kOTiles; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  // Q^T as the B operand of every k-step, in registers for the whole loop: ldmatrix j's matrix m4 (rows 0-7,
  // dims chunk 4 j + m4) holds k-step 2 j's (b0, b1) and 2 j + 1's.
  uint32_t qb[D / 16][2];
  const unsigned q_addr = smem_addr(qs);
#pragma unroll
  for (int j = 0; j < D / 32; ++j) {
    uint32_t r4[4];
    const int m4 = lane / 8, row = lane % 8, chunk = 4 * j + m4;
    ldmatrix_x4(r4, q_addr + 16 * swz<D>(row, chunk));
    qb[2 * j][0] = r4[0], qb[2 * j][1] = r4[1], qb[2 * j + 1][0] = r4[2], qb[2 * j + 1][1] = r4[3];
  }
  int st = 0;
  for (int i = 0; i < ntiles; ++i) {
    if constexpr (kPaired) {
      if (i > 0) cluster_wait();
      cluster_arrive_relaxed();
    }
    cp_async_wait<S - 1>();
    __syncwarp();  // every lane's copies of tile i are visible to the warp
    const uint4* kt = wstage + st * Shape<D>::kWarpStageVecs;
    const unsigned k_addr = smem_addr(kt), v_addr = smem_addr(kt + kWarpKeys * kChunks);
    // S^T = K Q^T over this warp's 16 keys: lane holds keys g (sc[0], sc[1]) and g + 8 (sc[2], sc[3]) of
    // rows 2 t4 and 2 t4 + 1.
    float chain[kQkChains][4] = {};
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t ka[4];  // K as A: matrix m4: keys (m4 % 2) * 8 + lane % 8, dims chunk 2 kk + m4 / 2
      const int m4 = lane / 8, row = (m4 % 2) * 8 + lane % 8, chunk = 2 * kk + m4 / 2;
      ldmatrix_x4(ka, k_addr + 16 * swz<D>(row, chunk));
      mma_16816<T>(chain[kk % kQkChains], ka, qb[kk][0], qb[kk][1]);
    }
    float sc[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float v = chain[0][e];
#pragma unroll
      for (int c = 1; c < kQkChains; ++c) v += chain[c][e];
      sc[e] = v * p.q_scale;
    }
    const int t0 = key_begin + i * kTileKeys + warp * kWarpKeys;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int j = t0 + g + 8 * (e / 2);
      if (j >= key_end || j > lim[e % 2]) sc[e] = kNegInf;
    }
    // Online softmax per row: row 2 t4 + r's 16 keys lie in the 8 lanes of this t4 (xor 4, 8, 16).
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mt = fmaxf(sc[r], sc[2 + r]);
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 4));
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 8));
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 16));
      mt = fmaxf(mt, m[r]);
      const float mu = usable_max(mt), alpha = ex2_approx(m[r] - mu);
      m[r] = mt;
      l[r] *= alpha;
#pragma unroll
      for (int n = 0; n < kOTiles; ++n) {
        o[n][r] *= alpha;
        o[n][2 + r] *= alpha;
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float w = ex2_approx(sc[2 * h + r] - mu);
        sc[2 * h + r] = w;
        l[r] += w;
      }
    }
    // P^T as the B operand (k = keys, n = rows): each 8 x 8 half transposed across the warp.
    const uint32_t pb0 = movmatrix_trans(pack2<T>(sc[0], sc[1])), pb1 = movmatrix_trans(pack2<T>(sc[2], sc[3]));
    // O^T += V^T P^T: V^T as A by ldmatrix.trans.
#pragma unroll
    for (int n = 0; n < kOTiles; ++n) {
      uint32_t va[4];  // matrix m4: keys (m4 / 2) * 8 + lane % 8, dims chunk 2 n + m4 % 2
      const int m4 = lane / 8, row = (m4 / 2) * 8 + lane % 8, chunk = 2 * n + m4 % 2;
      ldmatrix_x4_trans(va, v_addr + 16 * swz<D>(row, chunk));
      mma_16816<T>(o[n], va, pb0, pb1);
    }
    __syncwarp();  // every lane is done reading stage st
    issue(i + S, st);
    st = st + 1 == S ? 0 : st + 1;
  }
  if constexpr (kPaired)
    if (ntiles > 0) cluster_wait();  // the last arrival's wait
  cp_async_wait<0>();
  // Row 2 t4 + r's sum over the 8 lanes of this t4; then the warps merge through shared memory (rows < R).
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 4);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 8);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 16);
  }
  __syncthreads();  // every warp is done with its pipeline: s_acc reuses it
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = 2 * t4 + r;
    if (row < R) {
#pragma unroll
      for (int n = 0; n < kOTiles; ++n) {
        s_acc[warp][row][16 * n + g] = o[n][r];
        s_acc[warp][row][16 * n + g + 8] = o[n][2 + r];
      }
      if (g == 0) {
        s_m[warp][row] = m[r];
        s_l[warp][row] = l[r];
      }
    }
  }
  __syncthreads();
  // The output row of the block's row r, or -1 past p.rows.
  auto row_of = [&](int r) -> int64_t {
    const int rg = rb * R + r;
    if (rg >= p.rows) return -1;
    return (b * p.q_len + rg / p.group) * p.heads_q + kvh * p.group + rg % p.group;
  };
  if constexpr (kCluster) {
    auto column = [&](int r, int d4, float& lse) { return merged_column4(s_m, s_l, s_acc, r, 4 * d4, lse); };
    cluster_merge<T, R, D, kTcThreads>(p, reinterpret_cast<char*>(smem) + Shape<D>::kSmemBytes, split, column, row_of,
                                       p.rows - rb * R);
  } else {
    for (int idx = tid; idx < R * D; idx += kTcThreads) {
      const int r = idx / D, d = idx % D;
      if (rb * R + r >= p.rows) continue;  // row_of's test, first: the SASS is that of the inline form
      store_merged<T>(p, s_m, s_l, s_acc, r, d, row_of(r), split);
    }
  }
}

// Plan::cluster_combine: clusters of num_splits blocks, one block an SM (116 KB of shared memory each:
// two do not fit). Allowed two an SM, the scheduler packed a cluster's blocks two to an SM and K and V
// streamed through half the SMs (session 10's first version: 16-split b1 shapes 1.16-1.84x slower).
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

template <typename T, int D, int R>
void launch_split_tc(unsigned blocks, const Params& prm, const Plan& plan, cudaStream_t stream) {
  if (plan.cluster_combine) {
    static_assert(tc::Shape<D>::kSmemBytes + kRecvOffset + 4 * cluster_recv_floats(R, D) <= kClusterSmemBytes,
                  "the cluster variant needs the pipeline's memory, then cluster_merge's mbarrier and buffer");
    static_assert(tc::Shape<D>::kSmemBytes % 16 == 0, "cluster_merge's mbarrier and buffer are 16-byte aligned");
    launch_in_clusters<split_kernel_tc<T, D, R, true>>(blocks, cluster_blocks(plan), stream, prm);
    return;
  }
  if (plan.paired_clusters) {  // kClusterSmemBytes too: one block an SM, so a pair is not packed onto one SM
    launch_in_clusters<split_kernel_tc<T, D, R, false, true>>(blocks, cluster_blocks(plan), stream, prm);
    return;
  }
  opt_in_smem<split_kernel_tc<T, D, R>>(tc::Shape<D>::kSmemBytes);
  split_kernel_tc<T, D, R><<<blocks, kTcThreads, tc::Shape<D>::kSmemBytes, stream>>>(prm);
  SB_LAUNCH_CHECK();
}

// One block per output row: O = sum_s 2^(lse_s - M) o_s / sum_s 2^(lse_s - M), M = max_s lse_s, in a
// fixed order (bit-identical runs). Splits with lse = -inf (no visible key) weigh 0; a row whose
// splits all saw no key outputs 0.
template <typename T, int D>
__global__ void __launch_bounds__(kCombineWarps * 32)
    combine_kernel(const float* __restrict__ part_o, const float* __restrict__ part_lse, T* __restrict__ o,
                   int num_splits) {
  constexpr int kPerLane = D / 32;  // 2, 4 or 8 floats
  __shared__ __align__(16) float s_o[kCombineWarps][D];
  const int64_t row = blockIdx.x;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  pdl_wait();  // the split grid has finished and its partials are visible
  const float* lse = part_lse + row * num_splits;
  float mx = kNegInf;
  for (int s = lane; s < num_splits; s += 32) mx = fmaxf(mx, lse[s]);
  mx = warp_max(mx);
  const float mu = usable_max(mx);
  float sum = 0.0f;
  for (int s = lane; s < num_splits; s += 32) sum += exp2f(lse[s] - mu);
  sum = warp_sum(sum);

  float acc[kPerLane] = {};
#pragma unroll 4
  for (int s = warp; s < num_splits; s += kCombineWarps) {
    const float w = exp2f(lse[s] - mu);
    const float* src = part_o + (row * num_splits + s) * D + lane * kPerLane;
    float x[kPerLane];
    if constexpr (kPerLane == 2) {
      const float2 v = *reinterpret_cast<const float2*>(src);
      x[0] = v.x;
      x[1] = v.y;
    } else {
#pragma unroll
      for (int i = 0; i < kPerLane; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(src + i);
        x[i] = v.x;
        x[i + 1] = v.y;
        x[i + 2] = v.z;
        x[i + 3] = v.w;
      }
    }
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) acc[i] += w > 0.0f ? w * x[i] : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) s_o[warp][lane * kPerLane + i] = acc[i];
  __syncthreads();
  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float out = 0.0f;
#pragma unroll
    for (int w = 0; w < kCombineWarps; ++w) out += s_o[w][d];
    o[row * D + d] = from_float<T>(out * inv);
  }
}

// The combine grid: one block of kCombineWarps warps per output row, programmatically dependent (PDL,
// common/pdl.cuh) on the split grid launched before it: the split kernel lets it launch early, and it
// waits for the split grid's completion (and memory flush) before reading the partials.
template <typename... Params_, typename... Args>
void launch_combine_grid(void (*kernel)(Params_...), int64_t rows_total, cudaStream_t stream, Args... args) {
  launch_pdl(true, kernel, dim3(static_cast<unsigned>(rows_total)), dim3(kCombineWarps * 32), 0,
             stream, args...);
}

// Launches split_kernel<T, D, R, H> with its dynamic shared memory; over 48 KB needs an opt-in, once per
// instantiation and device, and the carveout preference asks for the largest shared-memory split so that
// two blocks fit on an SM.
template <typename T, int D, int R, int H>
void launch_split(unsigned blocks, const Params& prm, cudaStream_t stream) {
  using Shape = Tile<D, R, H>;
  opt_in_smem<split_kernel<T, D, R, H>>(Shape::kSmemBytes);
  split_kernel<T, D, R, H><<<blocks, kThreads, Shape::kSmemBytes, stream>>>(prm);
  SB_LAUNCH_CHECK();
}

// GQA row blocks at head_dim <= 128 run the tensor-core kernel (Plan::tensor_cores); pairs of kv heads (Plan::heads_per_block 2) exist only
// at 1 or 2 rows a block and head_dim <= 128; the rest (MHA with one row, head_dim 256) runs the FMA kernel.
template <typename T, int D, int R>
void launch_rows(const Plan& plan, unsigned blocks, const Params& prm, cudaStream_t stream) {
  if constexpr (R <= 2 && D <= 128) {
    if (plan.heads_per_block == 2) return launch_split<T, D, R, 2>(blocks, prm, stream);
  }
  if constexpr (R >= 2 && D <= 128) {
    if (!plan.tensor_cores) throw std::logic_error("attention/decode_splitk: a GQA plan without tensor cores");
    launch_split_tc<T, D, R>(blocks, prm, plan, stream);
  } else {
    launch_split<T, D, R, 1>(blocks, prm, stream);
  }
}

template <typename T, int D>
void launch_typed(const Plan& plan, const Params& prm, int64_t batch, cudaStream_t stream) {
  const auto blocks =
      static_cast<unsigned>(batch * (prm.heads_kv / plan.heads_per_block) * prm.row_blocks * prm.num_splits);
  const int64_t rows_total = batch * prm.q_len * prm.heads_q;
  switch (plan.rows_per_block) {
    case 1: launch_rows<T, D, 1>(plan, blocks, prm, stream); break;
    case 2: launch_rows<T, D, 2>(plan, blocks, prm, stream); break;
    case 4: launch_rows<T, D, 4>(plan, blocks, prm, stream); break;
    default:
      if constexpr (D <= 128) launch_rows<T, D, 8>(plan, blocks, prm, stream);
      break;
  }
  if (prm.num_splits > 1 && !plan.cluster_combine)
    launch_combine_grid(combine_kernel<T, D>, rows_total, stream, static_cast<const float*>(prm.part_o),
                        static_cast<const float*>(prm.part_lse), static_cast<T*>(prm.o), prm.num_splits);
}

// launch_floor's kernels: the split and combine kernels' launch shapes and their PDL handshake, no work.
__global__ void __launch_bounds__(kTcThreads) empty_split_kernel() {
  pdl_launch_dependents();
}
__global__ void __launch_bounds__(kCombineWarps * 32) empty_combine_kernel() {
  pdl_wait();
}

// Clusters of `cluster` blocks of the tensor-core split kernel (dtype and head_dim of p, R rows a block) that
// the device holds at once at kClusterSmemBytes a block (cudaOccupancyMaxActiveClusters).
template <typename T, int D, int R>
int max_active_clusters_typed(int cluster) {
  constexpr auto kernel = split_kernel_tc<T, D, R, true>;
  opt_in_smem<kernel>(kClusterSmemBytes);
  if (cluster > 8) SB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg = cluster_config(static_cast<unsigned>(cluster), cluster, nullptr, attr);
  int n = 0;
  SB_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, kernel, &cfg));
  return n;
}

}  // namespace

std::string launch_floor_supports(const Problem& p) {
  if (std::string why = supports(p); !why.empty()) return why;
  if (!make_plan(p, device_sm_count()).tensor_cores)
    return "the launch floor covers tensor-core plans only (GQA, 2-8 query rows a kv head, head_dim 64 or 128)";
  return "";
}

void launch_floor(const Problem& p, cudaStream_t stream) {
  if (const std::string why = launch_floor_supports(p); !why.empty())
    throw std::invalid_argument("attention/decode_splitk: launch_floor: " + why);
  const Plan plan = make_plan(p, device_sm_count());
  const auto blocks =
      static_cast<unsigned>(p.batch * (p.heads_kv / plan.heads_per_block) * plan.row_blocks * plan.num_splits);
  // Opted in at the largest size any plan launches it with.
  static_assert(kClusterSmemBytes >= tc_smem_bytes(64) && kClusterSmemBytes >= tc_smem_bytes(128));
  if (const int cluster = cluster_blocks(plan); cluster > 0) {
    launch_in_clusters<empty_split_kernel>(blocks, cluster, stream);
    return;
  }
  opt_in_smem<empty_split_kernel>(kClusterSmemBytes);
  empty_split_kernel<<<blocks, kTcThreads, tc_smem_bytes(static_cast<int>(p.head_dim)), stream>>>();
  SB_LAUNCH_CHECK();
  if (plan.num_splits > 1) launch_combine_grid(empty_combine_kernel, p.batch * p.q_len * p.heads_q, stream);
}

int max_active_clusters(const Problem& p, int cluster) {
  if (const std::string why = launch_floor_supports(p); !why.empty())
    throw std::invalid_argument("attention/decode_splitk: max_active_clusters: " + why);
  if (cluster < 1 || cluster > 16)
    throw std::invalid_argument("attention/decode_splitk: max_active_clusters: cluster size " +
                                std::to_string(cluster) + " is not in 1..16");
  const int rows = make_plan(p, device_sm_count()).rows_per_block;
  int n = 0;
  dispatch(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, float>) {
      auto by_rows = [&](auto d) {
        constexpr int D = decltype(d)::value;
        n = rows == 2 ? max_active_clusters_typed<T, D, 2>(cluster)
            : rows == 4 ? max_active_clusters_typed<T, D, 4>(cluster)
                        : max_active_clusters_typed<T, D, 8>(cluster);
      };
      if (p.head_dim == 64) by_rows(std::integral_constant<int, 64>{});
      else by_rows(std::integral_constant<int, 128>{});
    }
  });
  return n;
}

std::string supports(const Problem& p) {
  if (p.dtype == DType::f32) return "fp32 is not supported (fp16 and bf16 only: 8 elements per 16-byte load)";
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
    return "head_dim " + std::to_string(p.head_dim) + " is not supported (64, 128 or 256)";
  if (p.q_len > kMaxQLen)
    return "q_len " + std::to_string(p.q_len) + " > " + std::to_string(kMaxQLen) +
           " (decode: one query token, or up to 8 speculative tokens)";
  for (auto [ptr, name] : {std::pair<const void*, const char*>{p.q, "q"}, {p.k, "k"}, {p.v, "v"}})
    if (!is_aligned(ptr, 16)) return std::string(name) + " is not 16-byte aligned (16-byte loads)";
  if (p.workspace && !is_aligned(p.workspace, 16)) return "workspace is not 16-byte aligned";
  if (p.kv_len > std::numeric_limits<int>::max() - 4096) return "kv_len >= 2^31 - 4096 (32-bit key indices)";
  const int64_t rows_total = p.batch * p.q_len * p.heads_q;
  if (rows_total * kMaxSplits > std::numeric_limits<int>::max())
    return "batch * q_len * heads_q * 256 splits > 2^31 - 1 (split grid)";
  return "";
}

std::size_t workspace_bytes(const Problem& p) {
  if (!supports(p).empty()) return 0;
  return workspace_bytes(make_plan(p, device_sm_count()), p);
}

void launch(const Problem& p, cudaStream_t stream) {
  const Plan plan = make_plan(p, device_sm_count());
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
  dispatch(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>) {
      throw std::invalid_argument("attention/decode_splitk: fp32 is not supported");
    } else {
      switch (p.head_dim) {
        case 64: launch_typed<T, 64>(plan, prm, p.batch, stream); break;
        case 128: launch_typed<T, 128>(plan, prm, p.batch, stream); break;
        default: launch_typed<T, 256>(plan, prm, p.batch, stream); break;
      }
    }
  });
}

}  // namespace sb::attention::decode_splitk
