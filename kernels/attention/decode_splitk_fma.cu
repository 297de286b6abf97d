// decode_splitk's FMA split kernel, for the plans without tensor cores: MHA (one or two query rows a kv head)
// and head_dim 256. A 256-thread block = (batch, H adjacent kv heads, row block of R <= 4 query rows,
// split); head_dim / 8 lanes hold one head's 16-byte pieces of a key row, and the block's key groups take
// interleaved keys of each 16 KB tile of K and V. Q K^T is 8 FMAs a lane and a transposed reduce-scatter
// over the key's lanes; the online softmax and O += P V run in fp32 registers per key group; groups merge by
// shuffles, warps through shared memory. Traffic: K and V once per block, Q once, O or the split's partials
// once. Constraints: 16-bit K and V, head_dim 64, 128 or 256 (supports(), make_plan()).
#include <climits>
#include <stdexcept>

#include "attention/decode_splitk.cuh"
#include "common/fastmath.cuh"
#include "common/pdl.cuh"

namespace sb::attention::decode_splitk {

namespace {

constexpr int kWarps = kThreads / 32;

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

// The kernel's phases before and after its main loop; the loop's own phases stay inline (as helpers they
// change its SASS). Scalars come in by const reference: by value, the optimizer orders the main loop's two
// counters the other way round and ptxas allocates registers differently.
// The block's Q rows, pre-scaled, this lane's 8 dims (from dim c * 8) of each, in the lane's register
// row order (register row r is block row r ^ rmask of row block rb, kv head kvh, batch b); lim[r] = the last
// key row r may see (-1: none, or past p.rows, whose q stays 0).
template <typename T, int D, int R>
__device__ __forceinline__ void load_q(float (&qf)[R][8], int (&lim)[R], const Params& p, const int& rb,
                                       const int& rmask, const int64_t& b, const int64_t& kvh, const int& c) {
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
}

// Each row's running max (-inf: no key yet), sum and accumulators, before the first tile.
template <int R>
__device__ __forceinline__ void init_rows(float (&m)[R], float (&l)[R], float (&acc)[R][8]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    m[r] = kNegInf;
    l[r] = 0.0f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[r][e] = 0.0f;
  }
}

// Merges the key groups of a warp (lanes kGroupLanes = kLanesPerKey * H apart) by shuffles: every lane ends
// with its warp's max, sum and accumulators of its rows and dims.
template <int R, int kGroupLanes>
__device__ __forceinline__ void merge_groups(float (&m)[R], float (&l)[R], float (&acc)[R][8]) {
#pragma unroll
  for (int off = kGroupLanes; off < 32; off *= 2) {
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
}

// The warp's merged rows into shared memory, by the first kLanesPerKey * H lanes (head hs, dims from
// c * 8; register row r is row r ^ rmask): s_acc[warp][head * R + row], and the max and sum by lane c = 0
// of each head, whose rmask is 0.
template <int D, int R, int H>
__device__ __forceinline__ void stage_warp_rows(float (&s_acc)[kWarps][H * R][D], float (&s_m)[kWarps][H * R],
                                                float (&s_l)[kWarps][H * R], const float (&m)[R],
                                                const float (&l)[R], const float (&acc)[R][8], const int& lane,
                                                const int& warp, const int& hs, const int& c, const int& rmask) {
  constexpr int kLanes = Tile<D, R, H>::kLanesPerKey;
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
}

// The block's rows, merged across the warps (store_merged), to O or the split's partials: H heads (from kv
// head kvu * H) of R rows (row block rb, batch b), one (head, row, dim) a thread at a time.
template <typename T, int D, int R, int H>
__device__ __forceinline__ void store_rows(const Params& p, const float (&s_acc)[kWarps][H * R][D],
                                           const float (&s_m)[kWarps][H * R], const float (&s_l)[kWarps][H * R],
                                           const int& tid, const int& rb, const int64_t& kvu, const int64_t& b,
                                           const int& split) {
  for (int idx = tid; idx < H * R * D; idx += kThreads) {
    const int hr = idx / D, d = idx % D, r = hr % R, rg = rb * R + r;  // hr = head in block * R + row
    const int64_t kvh_out = kvu * H + hr / R;
    if (rg >= p.rows) continue;
    const int64_t row = (b * p.q_len + rg / p.group) * p.heads_q + kvh_out * p.group + rg % p.group;
    store_merged<T>(p, s_m, s_l, s_acc, hr, d, row, split);
  }
}

// The FMA split kernel. A 256-thread block = (batch, H adjacent kv heads, row block of <= 4 query rows,
// split), where H = Plan::heads_per_block is 2 at MHA with q_len <= 2, even heads_kv and head_dim <= 128,
// else 1. head_dim / 8 lanes hold one head's piece of a key row, 16 B each (16 lanes = 256 B at d128), and
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
  load_q<T, D, R>(qf, lim, p, rb, rmask, b, kvh, c);

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
  init_rows<R>(m, l, acc);

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
  merge_groups<R, kLanes * H>(m, l, acc);
  __syncthreads();  // every thread is done with its pipeline stages
  stage_warp_rows<D, R, H>(s_acc, s_m, s_l, m, l, acc, lane, warp, hs, c, rmask);
  __syncthreads();
  store_rows<T, D, R, H>(p, s_acc, s_m, s_l, tid, rb, kvu, b, split);
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

// Pairs of kv heads (Plan::heads_per_block 2) exist only at 1 or 2 rows a block and head_dim <= 128; GQA
// row blocks at head_dim <= 128 are the tensor-core kernel's, so the FMA kernel is not instantiated for them.
template <typename T, int D, int R>
void launch_rows(const Plan& plan, unsigned blocks, const Params& prm, cudaStream_t stream) {
  if constexpr (R <= 2 && D <= 128) {
    if (plan.heads_per_block == 2) return launch_split<T, D, R, 2>(blocks, prm, stream);
  }
  if constexpr (R >= 2 && D <= 128) {
    throw std::logic_error("attention/decode_splitk: a GQA plan without tensor cores");
  } else {
    launch_split<T, D, R, 1>(blocks, prm, stream);
  }
}

}  // namespace

void launch_fma(const Problem& p, const Plan& plan, cudaStream_t stream) {
  const Params prm = make_params(p, plan);
  const unsigned blocks = split_blocks(p, plan);
  dispatch_16bit(p, [&](auto tag, auto head_dim) {
    using T = decltype(tag);
    constexpr int D = decltype(head_dim)::value;
    switch (plan.rows_per_block) {
      case 1: launch_rows<T, D, 1>(plan, blocks, prm, stream); break;
      case 2: launch_rows<T, D, 2>(plan, blocks, prm, stream); break;
      case 4: launch_rows<T, D, 4>(plan, blocks, prm, stream); break;
      default: throw std::logic_error("attention/decode_splitk: an FMA plan of 8 rows a block");
    }
  });
}

}  // namespace sb::attention::decode_splitk
