// tiled_flash: FlashAttention-2's forward pass. A block owns a 128-row Q tile of one (batch, q head) and
// streams its kv head's K and V through shared memory; S = Q K^T, the online softmax and O += P V stay
// in registers, so the score matrix never reaches memory.
// Mapping: grid (q tiles, heads_q, batch), q tiles in reverse so the longest causal rows start first;
// 4 warps x 32 query rows. K/V tiles (64 keys at D 128, 128 at D 64) are double-buffered by cp.async and
// visited from the last down (the masked ones first); mma.sync m16n8k16 with fp32 accumulators, P reused
// in registers as the A operand of P V, 1/rowsum once at the end (a row that sees no key gives 0).
// Traffic: Q, O once; K, V once per q tile, from HBM only for a head's first tiles (L2 for the rest).
// Compute-bound: b4 h32 s4096 d128 causal is 0.55 TFLOP (687 us at 800 TFLOP/s) against 537 MB (128 us).
// Constraints: fp16/bf16, head_dim 64 or 128, 16-byte aligned tensors; supports() says so otherwise.
// Against manual: the score matrix never reaches memory (results/h200/FINDINGS.md has the measured effect).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>  // std::false_type, std::true_type: the masked and interior copies of a step

#include "attention/attention.h"
#include "attention/tiled_flash.cuh"
#include "common/check.h"
#include "common/fastmath.cuh"
#include "common/vec.cuh"

namespace sb::attention::tiled_flash {

namespace {

template <int HeadDim, int Warps, int MTiles, int BlockN, int SubN, bool QInRegs, int MinBlocks>
struct Config {
  static constexpr int kHeadDim = HeadDim;
  static constexpr int kThreads = Warps * 32;
  static constexpr int kMTiles = MTiles;  // m16 row tiles per warp (each K/V fragment read feeds kMTiles mma)
  static constexpr int kWarpRows = 16 * MTiles;
  static constexpr int kBlockM = Warps * kWarpRows;  // query rows per block
  static constexpr int kBlockN = BlockN;             // keys per K/V tile (per barrier)
  static constexpr int kSubN = SubN;                 // keys per softmax step: SubN / 2 S registers a thread
  static constexpr int kSubSteps = BlockN / SubN;
  static constexpr bool kQInRegs = QInRegs;          // Q fragments loaded once, or per K tile
  static constexpr int kMinBlocks = MinBlocks;       // resident blocks per SM asked of ptxas
  static constexpr int kChunks = HeadDim / 8;        // 16-byte chunks per row
  static constexpr int kKSteps = HeadDim / 16;       // k16 steps of Q K^T
  static constexpr int kNTiles = SubN / 8;           // n8 tiles of S
  static constexpr int kPSteps = SubN / 16;          // k16 steps of P V
  static constexpr int kDTiles = HeadDim / 8;        // n8 tiles of O
  // Shared-memory row: one 16-byte chunk of padding (1 mod 8 bank groups), so ldmatrix and the O staging
  // are free of bank conflicts.
  static constexpr int kRowElems = HeadDim + 8;
  static constexpr int kTileElems = BlockN * kRowElems;
  // Q, then K and V twice each (16-bit elements).
  static constexpr int kSmemBytes = (kBlockM * kRowElems + 4 * kTileElems) * 2;
  static_assert(kNTiles % 2 == 0 && kDTiles % 2 == 0, "ldmatrix.x4 loads two n8 tiles");
  static_assert(BlockN % SubN == 0, "whole softmax steps per tile");
};

// D 128: FA2's own 128 x 64 tile, 4 warps x 32 query rows, Q re-read from shared memory per k16 step,
// 64-key softmax steps (P V per k16 step of P, so S dies as it is consumed): 254 registers, no spills,
// two blocks an SM. The tiles that no row of the block sees masked (the last visited) run a copy of the
// step without mask code, and a row's reference max moves only when its max gains more than kLazyLog2
// (FlashAttention-4's lazy rescale: P <= 2^8 stays in range for fp16 and bf16, so P's rounding is
// unchanged).
using ConfigD128 = Config<128, 4, 2, 64, 64, false, 2>;
// D 64: Q in registers, 128-key tiles in 64-key steps: 64 O + 64 S + 32 Q.
using ConfigD64 = Config<64, 4, 2, 128, 64, true, 2>;

// Element offset of (row, 16-byte chunk) in a tile whose rows are padded by one chunk: a row is
// Chunks + 1 = 1 (mod 8) chunks, so the 8 rows one ldmatrix phase reads at the same chunk fall in 8
// different 16-byte bank groups, and every address is a lane's base plus a compile-time constant.
template <int Chunks>
__device__ __forceinline__ int pad(int row, int chunk) {
  return (row * (Chunks + 1) + chunk) * 8;
}

// Rows x head_dim tile from global rows `stride` elements apart into shared memory (padded rows), by
// all threads with cp.async, a warp covering whole rows per instruction. CheckRows: rows >= valid_rows
// are zero-filled without reading global memory. Offsets are 32-bit (Rows * stride < 2^31, supports()).
// x through an opaque move: ptxas can neither hoist nor reuse what is computed from it, so a value
// needed only at the end is recomputed there instead of holding registers through the K loop.
__device__ __forceinline__ int opaque(int x) {
  int y;
  asm volatile("mov.b32 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}

template <typename C, int Rows, bool CheckRows, typename T>
__device__ __forceinline__ void load_tile(T* s, const T* g, int stride, int valid_rows, int tid) {
  static_assert(Rows * C::kChunks % C::kThreads == 0, "whole chunks per thread");
  constexpr int kRowsPerPass = C::kThreads / C::kChunks;
  const int r0 = tid / C::kChunks, c = tid % C::kChunks;
  T* dst = s + pad<C::kChunks>(r0, c);
  const T* src = g + (r0 * stride + c * 8);
  // The pass stride goes through an opaque move so that ptxas recomputes each row address with one
  // add instead of hoisting Rows / kRowsPerPass 64-bit offsets out of the K loop (registers).
  const int step = opaque(kRowsPerPass * stride);
#pragma unroll
  for (int i = 0; i < Rows / kRowsPerPass; ++i) {
    const bool ok = !CheckRows || r0 + i * kRowsPerPass < valid_rows;
    cp_async_16_zfill(dst + pad<C::kChunks>(i * kRowsPerPass, 0), ok ? src : g, ok);
    src += step;
  }
}

// S = Q K^T for the kSubN keys from ks of the K tile at k_tile (raw scores, fp32). Q fragments come from
// q_frag (kQInRegs) or from shared memory at q_lane, per k16 step.
template <typename T, typename C>
__device__ __forceinline__ void score_step(float (&s)[C::kMTiles][C::kNTiles][4],
                                           const uint32_t (&q_frag)[C::kQInRegs ? C::kMTiles : 1]
                                                                    [C::kQInRegs ? C::kKSteps : 1][4],
                                           const unsigned q_lane, const unsigned k_tile, const int ks) {
  constexpr int MT = C::kMTiles, CH = C::kChunks;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < C::kNTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[mt][nt][e] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < C::kKSteps; ++kk) {
    uint32_t a[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      if constexpr (C::kQInRegs) {
#pragma unroll
        for (int e = 0; e < 4; ++e) a[mt][e] = q_frag[mt][kk][e];
      } else {
        ldmatrix_x4(a[mt], q_lane + 2 * pad<CH>(mt * 16, 2 * kk));
      }
    }
#pragma unroll
    for (int j = 0; j < C::kNTiles / 2; ++j) {
      uint32_t kb[4];
      ldmatrix_x4(kb, k_tile + 2 * pad<CH>(ks + 16 * j, 2 * kk));
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        mma_16816<T>(s[mt][2 * j], a[mt], kb[0], kb[1]);
        mma_16816<T>(s[mt][2 * j + 1], a[mt], kb[2], kb[3]);
      }
    }
  }
}

// Scores of keys past kv_len and, causal, of keys after i + causal_offset become -inf; n0 is the step's
// first key, warp_row0 the warp's first query row, (g, t) the lane's fragment coordinates.
template <typename C>
__device__ __forceinline__ void mask_step(float (&s)[C::kMTiles][C::kNTiles][4], const Params& p, const int n0,
                                          const int warp_row0, const int g, const int t) {
#pragma unroll
  for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = warp_row0 + mt * 16 + g + 8 * r;
      const int limit = p.causal ? min(p.kv_len, row + p.causal_offset + 1) : p.kv_len;  // keys < limit
#pragma unroll
      for (int nt = 0; nt < C::kNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          if (n0 + nt * 8 + 2 * t + e >= limit) s[mt][nt][2 * r + e] = -INFINITY;
    }
}

// Online softmax: new row max (the 4 threads of a row hold a quarter of the step's keys each),
// alpha = 2^((old max - new max) * scale_log2) rescales O and the partial sum, and
// P = 2^(s * scale_log2 - max * scale_log2). A row with no key yet has max -inf: its exponent
// base is 0, so P = 0 and alpha = 0, never inf - inf. alpha is exactly 1 where the max did not
// move, and the O rescale is skipped when that holds for every row of the warp (most steps of
// long rows: the max settles).
template <typename C>
__device__ __forceinline__ void softmax_step(const float (&s)[C::kMTiles][C::kNTiles][4],
                                             float (&row_max)[C::kMTiles][2], float (&o)[C::kMTiles][C::kDTiles][4],
                                             const float scale_log2, float (&alpha)[C::kMTiles][2],
                                             float (&base)[C::kMTiles][2]) {
  constexpr int MT = C::kMTiles;
  bool moved = false;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = row_max[mt][r];
#pragma unroll
      for (int nt = 0; nt < C::kNTiles; ++nt) mx = fmaxf(mx, fmaxf(s[mt][nt][2 * r], s[mt][nt][2 * r + 1]));
      moved |= lazy_max_step(row_max[mt][r], mx, scale_log2, base[mt][r], alpha[mt][r]);  // tiled_flash.cuh
    }
  if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int dt = 0; dt < C::kDTiles; ++dt)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[mt][dt][e] *= alpha[mt][e / 2];
  }
}

// P = 2^(...) for keys 16kk..16kk+15, rounded to the input type, then O += P V for those keys
// at once, so the S registers of a k16 step die as it is consumed (64-key steps at D 128 fit
// without spills) and the exponentials of step kk + 1 overlap the mma of step kk. S tiles 2kk and
// 2kk+1 are P's A fragment for step kk: a[r] from the even tile, a[2 + r] from the odd one. The
// partial sums add the keys in the same order as one pass over the step would; row_sum then takes
// alpha times its old value plus the step's sum.
template <typename T, typename C>
__device__ __forceinline__ void pv_step(const float (&s)[C::kMTiles][C::kNTiles][4],
                                        float (&o)[C::kMTiles][C::kDTiles][4], float (&row_sum)[C::kMTiles][2],
                                        const float (&alpha)[C::kMTiles][2], const float (&base)[C::kMTiles][2],
                                        const float scale_log2, const unsigned v_tile, const int ks) {
  constexpr int MT = C::kMTiles, CH = C::kChunks;
  float sum[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) sum[mt][r] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < C::kPSteps; ++kk) {
    // P rounded to the input type is the A operand of P V as it stands: the accumulator layout of two
    // n8 tiles of S is the A layout of one k16 step.
    uint32_t p_frag[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int h2 = 0; h2 < 2; ++h2) {
          const int nt = 2 * kk + h2;
          const float p0 = ex2_approx(fmaf(s[mt][nt][2 * r], scale_log2, -base[mt][r]));
          const float p1 = ex2_approx(fmaf(s[mt][nt][2 * r + 1], scale_log2, -base[mt][r]));
          sum[mt][r] += p0 + p1;
          p_frag[mt][h2 * 2 + r] = pack2<T>(p0, p1);
        }
#pragma unroll
    for (int j = 0; j < C::kDTiles / 2; ++j) {
      uint32_t vb[4];
      ldmatrix_x4_trans(vb, v_tile + 2 * pad<CH>(ks + 16 * kk, 2 * j));
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        mma_16816<T>(o[mt][2 * j], p_frag[mt], vb[0], vb[1]);
        mma_16816<T>(o[mt][2 * j + 1], p_frag[mt], vb[2], vb[3]);
      }
    }
  }
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) row_sum[mt][r] = row_sum[mt][r] * alpha[mt][r] + sum[mt][r];
}

// The epilogue of (batch b, q head h, q tile from row m0, `rows` rows of it exist): O / rowsum, staged
// through this warp's own rows of the Q tile sO (no other warp reads them), then written to global memory
// in 16-byte row segments.
template <typename T, typename C>
__device__ __forceinline__ void store_output(T* sO, const float (&o)[C::kMTiles][C::kDTiles][4],
                                             const float (&row_sum)[C::kMTiles][2], const Params& p, const int b,
                                             const int h, const int m0, const int rows, const int warp, const int lane,
                                             const int g, const int t) {
  constexpr int D = C::kHeadDim, CH = C::kChunks;
  // The output rows' address, recomputed here rather than held through the loop.
  T* gO;
  {
    const int bo = opaque(b), ho = opaque(h);
    gO = static_cast<T*>(p.o) + ((static_cast<int64_t>(bo) * p.q_len * p.heads_q + ho) * D +
                                 m0 * static_cast<int64_t>(p.heads_q) * D);
  }
  __syncwarp();
#pragma unroll
  for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = row_sum[mt][r];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      const float inv = l > 0.0f ? 1.0f / l : 0.0f;
      const int row = warp * C::kWarpRows + mt * 16 + g + 8 * r;
#pragma unroll
      for (int dt = 0; dt < C::kDTiles; ++dt)
        *reinterpret_cast<uint32_t*>(sO + pad<CH>(row, dt) + 2 * t) =
            pack2<T>(o[mt][dt][2 * r] * inv, o[mt][dt][2 * r + 1] * inv);
    }
  __syncwarp();
  constexpr int kRowsPerPass = 32 / CH;
#pragma unroll
  for (int i = 0; i < C::kWarpRows / kRowsPerPass; ++i) {
    const int row = warp * C::kWarpRows + i * kRowsPerPass + lane / CH, c = lane % CH;
    if (row < rows)
      *reinterpret_cast<uint4*>(gO + row * static_cast<int64_t>(p.heads_q) * D + c * 8) =
          *reinterpret_cast<const uint4*>(sO + pad<CH>(row, c));
  }
}

template <typename T, typename C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks) kernel(const Params p) {
  constexpr int D = C::kHeadDim, BM = C::kBlockM, BN = C::kBlockN, MT = C::kMTiles, CH = C::kChunks;
  extern __shared__ __align__(128) unsigned char smem[];
  T* sQ = reinterpret_cast<T*>(smem);
  T* sK = sQ + BM * C::kRowElems;  // [2][BN rows]
  T* sV = sK + 2 * C::kTileElems;  // [2][BN rows]

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int m_block = static_cast<int>(gridDim.x - 1 - blockIdx.x);  // heaviest causal tiles first
  const int h = blockIdx.y, b = blockIdx.z;
  const int m0 = m_block * BM;
  const int rows = min(BM, p.q_len - m0);  // query rows of this tile that exist
  const int64_t q_stride = static_cast<int64_t>(p.heads_q) * D, kv_stride = static_cast<int64_t>(p.heads_kv) * D;
  const int64_t q_off = (static_cast<int64_t>(b) * p.q_len * p.heads_q + h) * D + m0 * q_stride;
  const int64_t kv_off = (static_cast<int64_t>(b) * p.kv_len * p.heads_kv + h / p.group) * D;
  const T* gQ = static_cast<const T*>(p.q) + q_off;
  T* gO = static_cast<T*>(p.o) + q_off;
  const T* gK = static_cast<const T*>(p.k) + kv_off;
  const T* gV = static_cast<const T*>(p.v) + kv_off;

  // K tiles [0, n_tiles) hold every key some row of this tile may see.
  int n_tiles = (p.kv_len + BN - 1) / BN;
  if (p.causal) {
    const int last_key = m0 + rows - 1 + p.causal_offset;
    n_tiles = last_key < 0 ? 0 : min(n_tiles, last_key / BN + 1);
  }
  if (n_tiles == 0) {  // causal with q_len > kv_len: no row of this tile sees a key
    for (int idx = tid; idx < rows * CH; idx += C::kThreads)
      *reinterpret_cast<uint4*>(gO + (idx / CH) * q_stride + (idx % CH) * 8) = make_uint4(0, 0, 0, 0);
    return;
  }

  int n = n_tiles - 1;
  load_tile<C, BM, true>(sQ, gQ, static_cast<int>(q_stride), rows, tid);
  load_tile<C, BN, true>(sK, gK + n * BN * kv_stride, static_cast<int>(kv_stride), p.kv_len - n * BN, tid);
  load_tile<C, BN, true>(sV, gV + n * BN * kv_stride, static_cast<int>(kv_stride), p.kv_len - n * BN, tid);
  cp_async_commit();

  // Fragment coordinates of this lane (layouts in tiled_flash.cuh).
  const int g = lane / 4, t = lane % 4;
  // ldmatrix.x4 row addresses. Q as A: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15),
  // (rows 8-15, k 8-15) = a[0..3]. K as B: (keys 0-7, k 0-7), (keys 0-7, k 8-15), (keys 8-15, k 0-7),
  // (keys 8-15, k 8-15) = b[0], b[1] of n8 tile 2j, then of tile 2j+1. V as B, transposed: (keys 0-7,
  // d 0-7), (keys 8-15, d 0-7), (keys 0-7, d 8-15), (keys 8-15, d 8-15) = b[0], b[1] of d tile 2j, 2j+1.
  // Byte addresses in the shared state space: this lane's row start plus compile-time offsets.
  const unsigned q_lane = smem_addr(sQ) + 2 * pad<CH>(warp * C::kWarpRows + lane % 16, lane / 16);
  const unsigned k_lane = smem_addr(sK) + 2 * pad<CH>(lane % 8 + (lane / 16) * 8, (lane / 8) % 2);
  const unsigned v_lane = smem_addr(sV) + 2 * pad<CH>(lane % 8 + ((lane / 8) % 2) * 8, lane / 16);

  uint32_t q_frag[C::kQInRegs ? MT : 1][C::kQInRegs ? C::kKSteps : 1][4];
  if constexpr (C::kQInRegs) {
    cp_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int kk = 0; kk < C::kKSteps; ++kk) ldmatrix_x4(q_frag[mt][kk], q_lane + 2 * pad<CH>(mt * 16, 2 * kk));
  }

  float o[MT][C::kDTiles][4];
  float row_max[MT][2], row_sum[MT][2];  // per m16 tile: rows g and g + 8 (raw scores; partial sums)
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int dt = 0; dt < C::kDTiles; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[mt][dt][e] = 0.0f;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_max[mt][r] = -INFINITY;
      row_sum[mt][r] = 0.0f;
    }
  }
  const float scale_log2 = p.scale_log2;
  const int warp_row0 = m0 + warp * C::kWarpRows;  // first query row of this warp

  // One K/V tile: it-th visited, tile index n. kInterior: no row of the block sees a masked key of this
  // tile, so neither the per-warp skip nor the mask is compiled in.
  auto tile = [&](const int it, const int n, auto interior_c) {
    constexpr bool kInterior = decltype(interior_c)::value;
    cp_async_wait<0>();
    __syncthreads();  // tile n is visible to all, and every warp is done with the buffer tile n - 1 goes to
    const int buf = it & 1;
    if (n > 0) {  // tiles below the last one are whole
      const int64_t next = static_cast<int64_t>(n - 1) * BN * kv_stride;
      load_tile<C, BN, false>(sK + (buf ^ 1) * C::kTileElems, gK + next, static_cast<int>(kv_stride), BN, tid);
      load_tile<C, BN, false>(sV + (buf ^ 1) * C::kTileElems, gV + next, static_cast<int>(kv_stride), BN, tid);
    }
    cp_async_commit();
    const unsigned k_tile = k_lane + buf * (2 * C::kTileElems), v_tile = v_lane + buf * (2 * C::kTileElems);
#pragma unroll
    for (int sub = C::kSubSteps - 1; sub >= 0; --sub) {
      const int ks = sub * C::kSubN;  // first key of this step within the tile
      const int n0 = n * BN + ks;
      // A warp whose rows all end before this step's first key gains nothing from it.
      if (!kInterior && p.causal && n0 > warp_row0 + C::kWarpRows - 1 + p.causal_offset) continue;

      float s[MT][C::kNTiles][4];
      score_step<T, C>(s, q_frag, q_lane, k_tile, ks);

      // Mask keys past kv_len and, causal, keys after i + causal_offset: score -inf.
      if (!kInterior &&
          (n0 + C::kSubN > p.kv_len || (p.causal && n0 + C::kSubN - 1 > warp_row0 + p.causal_offset)))
        mask_step<C>(s, p, n0, warp_row0, g, t);

      float alpha[MT][2], base[MT][2];
      softmax_step<C>(s, row_max, o, scale_log2, alpha, base);
      pv_step<T, C>(s, o, row_sum, alpha, base, scale_log2, v_tile, ks);
    }
  };
  {
    // Tiles [0, n_interior) are interior: whole (n BN + BN <= kv_len) and, causal, their last key is
    // seen by the block's first row (n BN + BN - 1 <= m0 + causal_offset). Visited last, from the top.
    // D 64 keeps one copy of the step (two copies spill 40 bytes there).
    int it = 0;
    if constexpr (D == 128) {
      int n_interior = min(n_tiles, p.kv_len / BN);
      if (p.causal) n_interior = min(n_interior, max(m0 + p.causal_offset + 1, 0) / BN);
      for (; it < n_tiles - n_interior; ++it, --n) tile(it, n, std::false_type{});
      for (; it < n_tiles; ++it, --n) tile(it, n, std::true_type{});
    } else {
      for (; it < n_tiles; ++it, --n) tile(it, n, std::false_type{});
    }
  }

  store_output<T, C>(sQ, o, row_sum, p, b, h, m0, rows, warp, lane, g, t);
}

template <typename T, typename C>
void launch_config(const Problem& pr, cudaStream_t stream) {
  const Params p = make_params(pr);
  auto* kern = kernel<T, C>;
  // Over 48 KB of shared memory needs an opt-in, once per instantiation; the carveout preference asks
  // for the largest shared-memory split so that two blocks fit on an SM.
  static const cudaError_t opt_in = [kern] {
    const cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes);
    if (e != cudaSuccess) return e;
    return cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
  }();
  SB_CUDA_CHECK(opt_in);
  const dim3 grid(static_cast<unsigned>((pr.q_len + C::kBlockM - 1) / C::kBlockM), static_cast<unsigned>(pr.heads_q),
                  static_cast<unsigned>(pr.batch));
  kern<<<grid, C::kThreads, C::kSmemBytes, stream>>>(p);
  SB_LAUNCH_CHECK();
}

template <typename T>
void launch_typed(const Problem& p, cudaStream_t stream) {
  if (p.head_dim == 128)
    launch_config<T, ConfigD128>(p, stream);
  else
    launch_config<T, ConfigD64>(p, stream);
}

}  // namespace

std::string supports(const Problem& p) {
  if (p.dtype != DType::f16 && p.dtype != DType::bf16)
    return std::string(name(p.dtype)) + " is not supported: mma.sync m16n8k16 takes fp16 or bf16 operands";
  return params_refusal(p);
}

std::size_t workspace_bytes(const Problem&) { return 0; }

void launch(const Problem& p, cudaStream_t stream) {
  if (p.dtype == DType::bf16)
    launch_typed<__nv_bfloat16>(p, stream);
  else
    launch_typed<__half>(p, stream);
}

}  // namespace sb::attention::tiled_flash
