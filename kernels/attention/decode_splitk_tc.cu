// decode_splitk's tensor-core split kernel, for GQA row blocks (2, 4 or 8 query rows of one kv head) at
// head_dim 64 or 128 (Plan::tensor_cores). A 128-thread block = (batch, kv head, row block, split); warp w
// owns keys 16w .. 16w + 15 of every 64-key tile, with its own cp.async pipeline, and computes S^T = K Q^T and
// O^T += V^T P^T by mma.sync m16n8k16 with the query rows as the MMA's 8 columns. Traffic: K and V once per
// block, Q once, O or the split's partials once. Small plans merge their splits inside a thread-block
// cluster (cluster_merge, no workspace, no combine kernel); one-wave unsplit grids run as clusters of two
// adjacent kv heads in step. Also here: the launch floor (empty kernels of the same launch shapes) and the
// cluster occupancy query. Constraints: fp16/bf16, head_dim 64 or 128 (make_plan()).
#include <stdexcept>
#include <type_traits>

#include "attention/decode_splitk.cuh"
#include "attention/tiled_flash.cuh"
#include "common/device.h"
#include "common/fastmath.cuh"
#include "common/fp8.cuh"
#include "common/mbarrier.cuh"
#include "common/pdl.cuh"

namespace sb::attention::decode_splitk {

namespace {

// The tensor-core split kernel: cuDNN's shape of block (128 threads, two blocks an SM, few instructions per
// byte). 4 warps; a tile is kTcTileKeys = 64 keys, warp w owns keys 16w .. 16w + 15 of every tile with its
// own cp.async pipeline of tc_stages() stages (no block barrier in the loop). The loop computes S^T = K Q^T
// and O^T += V^T P^T by mma.sync m16n8k16 (fp32 accumulators): the warp's 16 keys (and 16 head dims at a
// time) are the MMA's 16 rows, the block's R <= 8 query rows its 8 columns (columns >= R are zero-filled
// padding). So a warp's 16 keys take D / 8 MMAs (D / 16 for each product), Q^T's fragments stay in
// registers for the whole loop (D / 8 of them), K and V^T arrive by XOR-swizzled ldmatrix (.trans for V),
// and P^T goes from the S^T accumulators to the B operand of the P V MMA by two movmatrix.trans a tile.
// Each lane holds query rows 2 t4 and 2 t4 + 1 (t4 = lane % 4): a row's softmax runs over the 8 lanes of its
// t4. Precision: Q enters the MMA as given (16-bit, exact) and the softmax scale x log2 e multiplies the
// fp32 scores after it, so a score is as exact as fp32 accumulation makes it at any scale and in fp16 too
// (rounding the scaled Q to 16 bits fails the +-5e5-logit tests); P = 2^(s - m) in [0, 1] enters the P V
// MMA rounded to the dtype, as the same-dtype reference and FlashAttention round it (l sums the fp32
// weights). Q reaches shared memory by cp.async in the K/V pipeline's first group; the Q K^T sum runs as two
// accumulator chains (even and odd 16-dim steps).
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
// Over an FP8 cache: a warp's kStages e4m3 stages (K then V, [16 keys][D bytes] each, unswizzled), then its
// 16-bit tile (Shape's stage layout), which the MMA loop reads.
template <int D>
struct Fp8Shape {
  static constexpr int kStages = tc_fp8_stages(D);
  static constexpr int kWarpStageVecs = tc_fp8_warp_stage_bytes(D) / 16;
  static constexpr int kWarpVecs = kStages * kWarpStageVecs + Shape<D>::kWarpStageVecs;
  static constexpr int kSmemBytes = tc_fp8_smem_bytes(D);
  static_assert(kSmemBytes == kTcWarps * kWarpVecs * 16 + 16 * D * 2, "the warps' memory, then Q");
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
// scope follows the loop (cluster.sync() compiles to MEMBAR.ALL.GPU + the barrier, a second wait that the
// output stores do not need).
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
// from the cluster wait to the last st.async.
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

// The split kernel's phases. Scalars come in by const reference: by value, the optimizer can order the
// main loop's counters the other way round and ptxas then allocates registers differently, so the kernel's
// SASS would no longer be that of the inline form.
// Q's rows rb * R .. + R - 1 of kv head kvh's group (batch b) into the 16-row tile qs as given, by cp.async;
// rows >= R or past p.rows are zero-filled from a valid address, and only a real row's address is formed
// (the padding rows, all of the second pass at d128, skip the division).
template <typename T, int D, int R>
__device__ __forceinline__ void copy_q(uint4* qs, const Params& p, const int& tid, const int& rb, const int64_t& kvh,
                                       const int64_t& b) {
  constexpr int kChunks = D / 8;
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
    cp_async_16_zfill(&qs[tc::swz<D>(row, chunk)], src, valid);
  }
}

// The last key rows 2 t4 and 2 t4 + 1 of row block rb may see (-1: none, or padding), in a sequence of kv_len
// keys.
template <int R>
__device__ __forceinline__ void row_limits(int (&lim)[2], const Params& p, const int& t4, const int& rb,
                                           const int64_t& kv_len) {
#pragma unroll
  for (int h2 = 0; h2 < 2; ++h2) {
    const int row = 2 * t4 + h2, rg = rb * R + row;
    lim[h2] = -1;
    if (row < R && rg < p.rows) {
      const int64_t i = rg / p.group;
      const int64_t last = p.causal ? i + kv_len - p.q_len : kv_len - 1;
      lim[h2] = static_cast<int>(last < -1 ? -1 : last);
    }
  }
}

// The tile's scores from the Q K^T chains: their sum times p.q_scale, -inf for keys past key_end or past a
// row's limit (keys t0 + g and t0 + g + 8, t0 the first of this warp's 16; rows 2 t4 and 2 t4 + 1).
__device__ __forceinline__ void scale_and_mask(float (&sc)[4], const float (&chain)[tc::kQkChains][4], const Params& p,
                                               const int& t0, const int& key_end, const int& g,
                                               const int (&lim)[2]) {
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    float v = chain[0][e];
#pragma unroll
    for (int c = 1; c < tc::kQkChains; ++c) v += chain[c][e];
    sc[e] = v * p.q_scale;
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const int j = t0 + g + 8 * (e / 2);
    if (j >= key_end || j > lim[e % 2]) sc[e] = kNegInf;
  }
}

// Online softmax of a tile's scores sc (keys g and g + 8 of rows 2 t4 and 2 t4 + 1) per row: row 2 t4 + r's
// 16 keys lie in the 8 lanes of this t4 (xor 4, 8, 16). m, l and O^T's tiles o are rescaled, sc becomes the
// weights 2^(s - m).
template <int kOTiles>
__device__ __forceinline__ void softmax_tile(float (&sc)[4], float (&m)[2], float (&l)[2], float (&o)[kOTiles][4]) {
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
}

// Row 2 t4 + r's sum over the 8 lanes of this t4, then the warp's rows (< R) into shared memory: O^T's tiles
// as s_acc[warp][row][dim], the max and sum by the lanes of g 0.
template <int D, int R>
__device__ __forceinline__ void stage_warp_rows(float (&s_acc)[tc::kTcWarps][R][D], float (&s_m)[tc::kTcWarps][R],
                                                float (&s_l)[tc::kTcWarps][R], const float (&m)[2], float (&l)[2],
                                                const float (&o)[D / 16][4], const int& warp, const int& g,
                                                const int& t4) {
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
      for (int n = 0; n < D / 16; ++n) {
        s_acc[warp][row][16 * n + g] = o[n][r];
        s_acc[warp][row][16 * n + g + 8] = o[n][2 + r];
      }
      if (g == 0) {
        s_m[warp][row] = m[r];
        s_l[warp][row] = l[r];
      }
    }
  }
}

// The block's rows, merged across its warps, to O (store_merged) or, kCluster, across the cluster's splits
// (cluster_merge): R rows of row block rb of kv head kvh (batch b).
template <typename T, int D, int R, bool kCluster>
__device__ __forceinline__ void store_rows(const Params& p, uint4* smem, const float (&s_acc)[tc::kTcWarps][R][D],
                                           const float (&s_m)[tc::kTcWarps][R], const float (&s_l)[tc::kTcWarps][R],
                                           const int& tid, const int& rb, const int64_t& kvh, const int64_t& b,
                                           const int& split) {
  // The output row of the block's row r, or -1 past p.rows.
  auto row_of = [&](int r) -> int64_t {
    const int rg = rb * R + r;
    if (rg >= p.rows) return -1;
    return (b * p.q_len + rg / p.group) * p.heads_q + kvh * p.group + rg % p.group;
  };
  if constexpr (kCluster) {
    auto column = [&](int r, int d4, float& lse) { return merged_column4(s_m, s_l, s_acc, r, 4 * d4, lse); };
    cluster_merge<T, R, D, kTcThreads>(p, reinterpret_cast<char*>(smem) + tc::Shape<D>::kSmemBytes, split, column,
                                       row_of, p.rows - rb * R);
  } else {
    for (int idx = tid; idx < R * D; idx += kTcThreads) {
      const int r = idx / D, d = idx % D;
      if (rb * R + r >= p.rows) continue;  // row_of's test, first: the SASS is that of the inline form
      store_merged<T>(p, s_m, s_l, s_acc, r, d, row_of(r), split);
    }
  }
}

// kCluster: Plan::cluster_combine's kernel (its splits merge in distributed shared memory). kPaired:
// Plan::paired_clusters' (a cluster of kPairBlocks unsplit blocks, adjacent kv heads of one sequence, that
// pass a cluster barrier every tile: arrive after tile i's wait, wait before tile i + 1's, so no block of the
// pair gets more than two tiles ahead; every block of the pair has the same ntiles). P = PagedParams:
// launch_paged's (a paged cache, each sequence of its own length), without clusters; P = PagedFp8Params: the
// same over an FP8 cache (each tile's e4m3 bytes widened into the warp's 16-bit tile before the MMA loop reads
// it, v_scale applied to the output).
template <typename T, int D, int R, bool kCluster = false, bool kPaired = false, typename P = Params>
__global__ void __launch_bounds__(kTcThreads, 2) split_kernel_tc(const P p) {
  constexpr bool kFp8 = std::is_same_v<P, PagedFp8Params>;
  constexpr bool kPagedKv = std::is_same_v<P, PagedParams> || kFp8;
  static_assert(R <= 8, "the query rows are the MMA's 8 columns: at most 8");
  using namespace tc;
  constexpr int S = kFp8 ? Fp8Shape<D>::kStages : Shape<D>::kStages, kChunks = D / 8;
  constexpr int kOTiles = D / 16;  // O^T's m16 tiles of head dims
  // A warp's stage, and all of a warp's memory (its stages; over an FP8 cache, its 16-bit tile after them).
  constexpr int kStageVecs = kFp8 ? Fp8Shape<D>::kWarpStageVecs : Shape<D>::kWarpStageVecs;
  constexpr int kWarpVecs = kFp8 ? Fp8Shape<D>::kWarpVecs : S * Shape<D>::kWarpStageVecs;
  extern __shared__ uint4 smem[];
  uint4* qs = smem + kTcWarps * kWarpVecs;  // [16 rows][D] (16-byte chunks)
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

  static_assert(!(kPagedKv && (kCluster || kPaired)), "paged plans launch no clusters");
  const int64_t kv_len = [&]() -> int64_t {  // the sequence's keys
    if constexpr (kPagedKv) return p.seq_lens[b];
    else return p.kv_len;
  }();
  const int64_t first = static_cast<int64_t>(split) * p.chunk_keys;
  const int key_begin = static_cast<int>(first < kv_len ? first : kv_len);
  const int key_end = static_cast<int>(first + p.chunk_keys < kv_len ? first + p.chunk_keys : kv_len);
  const int64_t key_stride = p.heads_kv * D;
  const T* kbase = static_cast<const T*>(p.k) + (b * p.kv_len * p.heads_kv + kvh) * D;
  const T* vbase = static_cast<const T*>(p.v) + (b * p.kv_len * p.heads_kv + kvh) * D;
  const int ntiles = key_end > key_begin ? (key_end - key_begin + kTileKeys - 1) / kTileKeys : 0;
  uint4* wstage = smem + warp * kWarpVecs;  // this warp's stages: [stage][K, V][16][D]
  // K and V copies, the address arithmetic out of the kSteps warp-wide steps. Lane (cq, cc) = (lane / kChunks, lane % kChunks) copies
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
  // Over an FP8 cache a key row is D / 16 chunks of e4m3 bytes, staged unswizzled ([row][chunk]: the widening
  // reads them with plain loads), so a lane copies chunk cc of rows kSteps cq + s to slot (kSteps cq + s)
  // kInChunks + cc.
  constexpr int kInChunks = kFp8 ? D / 16 : kChunks;  // 16-byte chunks of a key row as copied
  constexpr int kSteps = kWarpKeys * kInChunks / 32;
  static_assert(32 % kInChunks == 0 && (kFp8 ? (kSteps == 2 || kSteps == 4) : (kSteps == 4 || kSteps == 8)),
                "whole rows a step; row & 7 splits as above; a lane's rows never cross a page of 16k keys");
  const int cq = lane / kInChunks, cc = lane % kInChunks;
  const unsigned lane_slot = 16u * static_cast<unsigned>(kSteps * cq * kChunks + (cc ^ ((kSteps * cq) & 7)));
  const unsigned lane_slot_fp8 = 16u * static_cast<unsigned>(kSteps * cq * kInChunks + cc);
  constexpr int64_t kElemBytes = kFp8 ? 1 : static_cast<int64_t>(sizeof(T));
  const int64_t row_bytes = key_stride * kElemBytes;
  const char* klane = reinterpret_cast<const char*>(kbase + static_cast<int64_t>(key_begin) * key_stride + cc * 8);
  const char* vlane = reinterpret_cast<const char*>(vbase + static_cast<int64_t>(key_begin) * key_stride + cc * 8);
  if constexpr (kFp8) {  // the lane's piece of kv head kvh in the pool's row 0: copy_tile adds a key's page
    klane = static_cast<const char*>(p.k) + (kvh * D + cc * 16);
    vlane = static_cast<const char*>(p.v) + (kvh * D + cc * 16);
  } else if constexpr (kPagedKv) {
    klane = reinterpret_cast<const char*>(static_cast<const T*>(p.k) + kvh * D + cc * 8);
    vlane = reinterpret_cast<const char*>(static_cast<const T*>(p.v) + kvh * D + cc * 8);
  }
  const unsigned stage0 = smem_addr(wstage);
  auto copy_tile = [&](int i, int st) {
    if (i < ntiles) {
      const int r0 = i * kTileKeys + warp * kWarpKeys + kSteps * cq;  // step 0's row, from key_begin
      const int left = key_end - key_begin - r0;                      // step s copies a key iff s < left
      int64_t off = static_cast<int64_t>(r0) * row_bytes;
      const char* kl = klane;
      const char* vl = vlane;
      if constexpr (kPagedKv) {
        // The kSteps rows from key row key_begin + r0 (a multiple of kSteps: key_begin is one of the tile,
        // r0 of kSteps) lie in one page (page_size a multiple of 16 >= kSteps): one table read a call, the
        // rows then page_row + s. Rows past the sequence read the pool's first piece (a valid address).
        off = 0;
        if (left > 0) {  // 32-bit division: key rows and page sizes fit (supports())
          const unsigned row = static_cast<unsigned>(key_begin + r0), page_size = static_cast<unsigned>(p.page_size);
          const int64_t page = p.block_table[b * p.max_pages + row / page_size];
          off = (page * p.page_size + row % page_size) * row_bytes;
        }
      }
      const unsigned stage = stage0 + 16u * static_cast<unsigned>(st * kStageVecs);
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        const bool valid = s < left;
        const int64_t o = valid ? off : 0;
        if constexpr (!kFp8) {
          const unsigned dst = stage + ((lane_slot ^ (16u * s)) + 16u * s * kChunks);
          cp_async_16_zfill(dst, kl + o, valid);
          cp_async_16_zfill(dst + 16u * kWarpKeys * kChunks, vl + o, valid);
        } else {
          const unsigned dst = stage + (lane_slot_fp8 + 16u * s * kInChunks);
          cp_async_16_zfill(dst, kl + o, valid);
          cp_async_16_zfill(dst + 16u * kWarpKeys * kInChunks, vl + o, valid);
        }
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
  copy_q<T, D, R>(qs, p, tid, rb, kvh, b);
  cp_async_commit();
#pragma unroll
  for (int i = 1; i < S; ++i) issue(i, i);
  int lim[2];  // the last key rows 2 t4 and 2 t4 + 1 may see (-1: none, or padding)
  row_limits<R>(lim, p, t4, rb, kv_len);
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
    if constexpr (kFp8) {
      // Widen the stage's e4m3 K and V into the warp's 16-bit tile, chunk ci = lane + 32 u of each: row
      // ci / kInChunks, e4m3 chunk c8 = ci % kInChunks (dims 16 c8 ..) to the tile's chunks 2 c8 and 2 c8 + 1.
      const uint4* in = wstage + st * kStageVecs;
      uint4* tile = wstage + S * kStageVecs;
#pragma unroll
      for (int kv = 0; kv < 2; ++kv)
#pragma unroll
        for (int u = 0; u < D / 32; ++u) {
          const int ci = lane + 32 * u, row = ci / kInChunks, c8 = ci % kInChunks;
          uint4 lo, hi;
          e4m3x16_to<T>(in[kv * kWarpKeys * kInChunks + ci], lo, hi);
          tile[kv * kWarpKeys * kChunks + swz<D>(row, 2 * c8)] = lo;
          tile[kv * kWarpKeys * kChunks + swz<D>(row, 2 * c8 + 1)] = hi;
        }
      __syncwarp();  // the tile is complete, and stage st is read: refill it now
      issue(i + S, st);
    }
    const uint4* kt = kFp8 ? wstage + S * kStageVecs : wstage + st * Shape<D>::kWarpStageVecs;
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
    const int t0 = key_begin + i * kTileKeys + warp * kWarpKeys;
    scale_and_mask(sc, chain, p, t0, key_end, g, lim);
    softmax_tile<kOTiles>(sc, m, l, o);
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
    __syncwarp();  // every lane is done reading stage st (over an FP8 cache, the 16-bit tile)
    if constexpr (!kFp8) issue(i + S, st);
    st = st + 1 == S ? 0 : st + 1;
  }
  if constexpr (kPaired)
    if (ntiles > 0) cluster_wait();  // the last arrival's wait
  cp_async_wait<0>();
  if constexpr (kFp8) {  // V's scale, on the output it scales linearly (before any merge)
#pragma unroll
    for (int n = 0; n < kOTiles; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[n][e] *= p.v_scale;
  }
  // The warps merge through shared memory.
  stage_warp_rows<D, R>(s_acc, s_m, s_l, m, l, o, warp, g, t4);
  __syncthreads();
  store_rows<T, D, R, kCluster>(p, smem, s_acc, s_m, s_l, tid, rb, kvh, b, split);
}

// The split grid of a tensor-core plan: P = Params (the contiguous cache: plain, cluster-merge or paired
// grids) or PagedParams (launch_paged's: plain only).
template <typename T, int D, int R, typename P>
void launch_split_tc(unsigned blocks, const P& prm, const Plan& plan, cudaStream_t stream) {
  if constexpr (std::is_same_v<P, Params>) {
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
  }
  constexpr auto kernel = split_kernel_tc<T, D, R, false, false, P>;
  constexpr int kSmem = std::is_same_v<P, PagedFp8Params> ? tc::Fp8Shape<D>::kSmemBytes : tc::Shape<D>::kSmemBytes;
  opt_in_smem<kernel>(kSmem);
  kernel<<<blocks, kTcThreads, kSmem, stream>>>(prm);
  SB_LAUNCH_CHECK();
}

// launch_split_tc at the plan's dtype, head_dim (64 or 128) and rows a block (2, 4 or 8).
template <typename P>
void launch_split_tc_for(const Problem& p, const Plan& plan, const P& prm, cudaStream_t stream) {
  const unsigned blocks = split_blocks(p, plan);
  dispatch_16bit(p, [&](auto tag, auto head_dim) {
    using T = decltype(tag);
    constexpr int D = decltype(head_dim)::value;
    if constexpr (D <= 128) {
      switch (plan.rows_per_block) {
        case 2: launch_split_tc<T, D, 2>(blocks, prm, plan, stream); break;
        case 4: launch_split_tc<T, D, 4>(blocks, prm, plan, stream); break;
        case 8: launch_split_tc<T, D, 8>(blocks, prm, plan, stream); break;
        default: throw std::logic_error("attention/decode_splitk: a tensor-core plan of one row a block");
      }
    } else {
      throw std::logic_error("attention/decode_splitk: a tensor-core plan at head_dim 256");
    }
  });
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

// launch_floor's kernels: the split and combine kernels' launch shapes and their PDL handshake, no work.
__global__ void __launch_bounds__(kTcThreads) empty_split_kernel() {
  pdl_launch_dependents();
}
__global__ void __launch_bounds__(kCombineWarps * 32) empty_combine_kernel() {
  pdl_wait();
}

}  // namespace

void launch_tc(const Problem& p, const Plan& plan, cudaStream_t stream) {
  launch_split_tc_for(p, plan, make_params(p, plan), stream);
}

void launch_tc_paged(const Problem& p, const Plan& plan, const PagedKv& kv, cudaStream_t stream) {
  if (!plan.tensor_cores || plan.cluster_combine || plan.paired_clusters || kv.page_size % 16 != 0)
    throw std::logic_error("attention/decode_splitk: a paged launch needs a tensor-core plan without clusters "
                           "and pages of a multiple of 16 keys");
  const PagedParams prm{make_params(p, plan), kv.seq_lens, kv.block_table, kv.page_size, kv.max_pages};
  if (!kv.fp8_e4m3) {
    launch_split_tc_for(p, plan, prm, stream);
    return;
  }
  PagedFp8Params fp8{prm, kv.v_scale};
  fp8.q_scale *= kv.k_scale;  // S = (Q . K8) k_scale: the scale rides on the softmax scale
  launch_split_tc_for(p, plan, fp8, stream);
}

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

}  // namespace sb::attention::decode_splitk
