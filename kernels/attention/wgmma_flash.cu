// wgmma_flash: tiled_flash's algorithm on Hopper's warpgroup MMA, warp-specialized. A block owns a Q tile
// of one (batch, q head): two or three consumer warpgroups of 64 query rows each (wgmma_flash.h says which)
// and a producer warpgroup; where wgmma_flash.h's persistent() says so, one block an SM takes work items
// from a counter instead.
// - producer(): one thread copies each 128-key K and V tile by TMA (128-byte swizzle: the layout wgmma
//   reads) into 2-stage rings behind full/empty mbarriers; the warpgroup gives registers back (setmaxnreg).
// - visit(): S = Q K^T by wgmma.m64n128k16 from shared memory, the mask, the online softmax (lazy rescale)
//   and P in registers, the A of O += P V. Ping-pong (FlashAttention-3): a warpgroup issues its MMAs on its
//   turn and passes the turn through a named barrier, so the others' softmaxes run while its MMAs do; with
//   two warpgroups the softmax also overlaps the previous tile's P V (two P buffers, unrolled in pairs).
// - store_o(): O / rowsum staged through the warpgroup's rows of the Q tile, written in 16-byte segments.
// Traffic: Q and O once, K and V once per Q tile (L2 after a head's first tile). Compute-bound: b4 h32 s4096
// d128 causal is 0.55 TFLOP (687 us at 800 TFLOP/s) against 537 MB (128 us). Against tiled_flash: wgmma from
// shared memory, TMA copies and warp specialization (results/h200/FINDINGS.md has the measured effect).
// Constraints: sm_90a (an H100/H200 and a build for 90a), fp16/bf16, head_dim 64 or 128, 16-byte aligned
// tensors, a batch entry of Q, K or V under 2^40 bytes (a tensor map's stride); supports() says which is missing.
#include <cuda.h>  // CUtensorMap and its enums only: the encoder comes through the runtime (no libcuda link)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>  // the visit step's compile-time flags; std::conditional_t

#include "attention/attention.h"
#include "attention/tiled_flash.cuh"  // pack2, smem_addr
#include "attention/wgmma.cuh"
#include "attention/wgmma_flash.h"
#include "common/check.h"
#include "common/device.h"
#include "common/fastmath.cuh"
#include "common/mbarrier.cuh"
#include "common/vec.cuh"

// Set by kernels/CMakeLists.txt when CMAKE_CUDA_ARCHITECTURES includes 90a.
#ifndef SB_BUILT_FOR_SM90A
#define SB_BUILT_FOR_SM90A 0
#endif

namespace sb::attention::wgmma_flash {

namespace {

using tiled_flash::lazy_max_step;
using tiled_flash::make_params;
using tiled_flash::pack2;
using tiled_flash::params_refusal;
using tiled_flash::Params;
using tiled_flash::smem_addr;

// Overlap: the intra-warpgroup overlap (two P buffers), two warpgroups only. The D 128 persistent kernel
// runs without it (PersistentConfig below).
template <int HeadDim, int Warpgroups, bool Overlap = Warpgroups == 2>
struct Config {
  static constexpr int kHeadDim = HeadDim;
  static constexpr int kWarpgroups = Warpgroups;      // consumer warpgroups of 64 query rows
  static_assert(Warpgroups == 2 || Warpgroups == 3, "two or three consumer warpgroups");
  static constexpr bool kOverlap = Overlap;           // two P buffers: a softmax overlaps its own P V
  static_assert(!Overlap || Warpgroups == 2, "the overlap with two warpgroups only");
  static constexpr int kConsumers = 128 * Warpgroups;
  static constexpr int kThreads = kConsumers + 128;   // and a producer warpgroup
  // setmaxnreg: the threads start at 65,536 / kThreads registers each (in 8s: 168 for two warpgroups, 128
  // for three); the producer gives registers back so that the consumers can hold S, two P buffers and O
  // (64 + 2 x 32 + 64 a thread at D 128) unspilled. Splits (ptxas, no spill under -warn-spills):
  // D 128: 2 x 128 x 240 + 128 x 24 = 64,512 (its producer only issues TMA copies; 232 for the consumers
  // spills 8 bytes).
  // D 64, two: 2 x 128 x 216 + 128 x 72 = 64,512 (its producer spills at 40 and at 56).
  // D 64, three (one P buffer): 3 x 128 x 160 + 128 x 32 = 65,536 (152 for the consumers serializes their
  // wgmma; the producer spills at 24).
  static constexpr int kProducerRegs = Warpgroups == 3 ? 32 : HeadDim == 64 ? 72 : 24;
  static constexpr int kConsumerRegs = Warpgroups == 3 ? 160 : HeadDim == 64 ? 216 : 240;
  static_assert(Warpgroups * 128 * kConsumerRegs + 128 * kProducerRegs <= 65536 / kThreads / 8 * 8 * kThreads,
                "more registers than the block holds at launch");
  static constexpr int kBlockM = 64 * Warpgroups;     // query rows per block
  static constexpr int kBlockN = 128;                 // keys per K/V tile
  static constexpr int kStages = 2;                   // K tiles and V tiles in flight, each
  static constexpr int kChunks = HeadDim / 8;         // 16-byte chunks a row
  static constexpr int kQBytes = kBlockM * HeadDim * 2;  // column blocks of 64 elements, 128 B a row
  static constexpr int kTileBytes = kBlockN * HeadDim * 2;
  static constexpr int kBarBytes = 4 * kStages * 8;   // full and empty mbarriers of K and of V
  static constexpr int kSmemBytes = 1024 + kQBytes + 2 * kStages * kTileBytes + kBarBytes;  // + alignment
  static constexpr int kOAcc = HeadDim / 2;           // O accumulators a thread (m64n<HeadDim>)
  static_assert(kSmemBytes <= 227 * 1024, "over the 227 KB of shared memory a block may have");
};

// Rows x head_dim from global rows `stride` elements apart into the swizzled layout at shared address
// `dst` (column blocks `block_stride` bytes apart, 128 bytes a row; dst's row index is a multiple of 8), by
// `Loaders` threads (index `i`) with cp.async; rows >= valid_rows are zero-filled without reading.
template <typename C, int Loaders, int Rows, typename T>
__device__ __forceinline__ void load_tile(unsigned dst, int block_stride, const T* g, int stride, int valid_rows, int i) {
  constexpr int kRowsPerPass = Loaders / C::kChunks;
  static_assert(Loaders % C::kChunks == 0 && Rows % kRowsPerPass == 0, "whole rows per pass, whole passes");
  const int r0 = i / C::kChunks, c = i % C::kChunks;
  const unsigned d0 = dst + (c / 8) * block_stride + (c % 8) * 16;
  const T* src = g + (static_cast<int64_t>(r0) * stride + c * 8);
#pragma unroll
  for (int pass = 0; pass < Rows / kRowsPerPass; ++pass) {
    const int row = r0 + pass * kRowsPerPass;
    const bool ok = row < valid_rows;
    cp_async_16_zfill((d0 + row * 128) ^ ((row % 8) << 4), ok ? src : g, ok);  // chunk c % 8 ^ row % 8
    src += static_cast<int64_t>(kRowsPerPass) * stride;
  }
}

template <typename T, int N>
__device__ __forceinline__ void mma_pv(float (&o)[N], const uint32_t (&a)[4], uint64_t b) {
  if constexpr (N == 64)
    wgmma::mma_rs_m64n128k16<T>(o, a, b);
  else
    wgmma::mma_rs_m64n64k16<T>(o, a, b);
}

// Named barriers (0 is __syncthreads): 1 .. W order the W consumer warpgroups' MMA issue (turn_wait /
// turn_pass), W + 1 .. 2 W are each warpgroup's own.
__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// The tensor maps (make_maps): K's and V's dims (head_dim, heads_kv, kv_len, batch), a box of 64 x 1 x 128 x 1
// (one 64-column block of a 128-key tile), keys past kv_len read as zeros; with persistent blocks Q's too,
// dims (head_dim, heads_q, q_len, batch), a box of 64 x 1 x kBlockM x 1, rows past q_len read as zeros.
// Kernel parameters (__grid_constant__), so that TMA reads them where they are.
struct Maps {
  CUtensorMap k, v, q;  // q: encoded for the persistent kernel only
};

// The box at (column c, kv head hk, key n, batch b) of `map` into shared memory at `dst`; it completes on the
// mbarrier `bar` with its byte count (expected by an arrive.expect_tx).
__device__ __forceinline__ void tma_load_box(unsigned dst, const CUtensorMap* map, int c, int hk, int n, int b,
                                             unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c), "r"(hk), "r"(n), "r"(b), "r"(bar)
      : "memory");
}

// A work item: one Q tile of one (batch, q head), and the K/V tiles it visits.
struct Item {
  int m0, rows, n_tiles;  // first query row, rows (< kBlockM in the last tile), K/V tiles visited
  int64_t q_off;          // element offset of its first Q row
  int b, h, hk;           // batch, q head (Q's coordinates) and kv head (K's and V's)
};

template <typename C>
__device__ __forceinline__ Item item_at(const Params& p, int m_block, int h, int b) {
  constexpr int D = C::kHeadDim, BM = C::kBlockM, BN = C::kBlockN;
  Item it;
  it.m0 = m_block * BM;
  it.rows = min(BM, p.q_len - it.m0);
  const int64_t q_stride = static_cast<int64_t>(p.heads_q) * D;
  it.q_off = (static_cast<int64_t>(b) * p.q_len * p.heads_q + h) * D + it.m0 * q_stride;
  it.b = b;
  it.h = h;
  it.hk = h / p.group;
  it.n_tiles = (p.kv_len + BN - 1) / BN;
  if (p.causal) {
    const int last_key = it.m0 + it.rows - 1 + p.causal_offset;
    it.n_tiles = last_key < 0 ? 0 : min(it.n_tiles, last_key / BN + 1);
  }
  return it;
}

// The persistent kernel's work list: items w = 0 .. items - 1 are (q tile, head, batch), head-major with a
// head's q tiles heaviest first, the default grid's order; `next` (the workspace, zeroed before the launch)
// hands them out.
struct Sched {
  int m_blocks, items;
  unsigned* next;
};

// The block's shared memory, as addresses in the shared state space: Q's tile (Persistent: two), the K and
// V rings, then their mbarriers: full_k[S], full_v[S], empty_k[S], empty_v[S]; Persistent: full_q[2],
// empty_q[2], then the items' slots. Swizzled tiles need 1024-byte aligned 8-row groups: the base is
// aligned up (the slack is in kSmemBytes).
template <typename C, bool Persistent>
struct Smem {
  static constexpr int S = C::kStages;
  unsigned raw, sQ, sK, sV, sQ1, bars;
  __device__ __forceinline__ explicit Smem(unsigned raw_addr) : raw(raw_addr) {
    sQ = (raw + 1023u) & ~1023u;
    sK = sQ + C::kQBytes;
    sV = sK + S * C::kTileBytes;
    sQ1 = sV + S * C::kTileBytes;  // Persistent: the second Q buffer
    bars = sV + S * C::kTileBytes + (Persistent ? C::kQBytes : 0);
  }
  __device__ __forceinline__ unsigned full_k(int s) const { return bars + 8 * s; }
  __device__ __forceinline__ unsigned full_v(int s) const { return bars + 8 * (S + s); }
  __device__ __forceinline__ unsigned empty_k(int s) const { return bars + 8 * (2 * S + s); }
  __device__ __forceinline__ unsigned empty_v(int s) const { return bars + 8 * (3 * S + s); }
  __device__ __forceinline__ unsigned full_q(int qb) const { return bars + 8 * (4 * S + qb); }
  __device__ __forceinline__ unsigned empty_q(int qb) const { return bars + 8 * (4 * S + 2 + qb); }
};

// The persistent kernel's item w.
template <typename C>
__device__ __forceinline__ Item item_of(const Params& p, const Sched& sc, int w) {
  const int bh = w / sc.m_blocks;
  return item_at<C>(p, sc.m_blocks - 1 - w % sc.m_blocks, bh % p.heads_q, bh / p.heads_q);
}

// Ping-pong, round-robin: warpgroup wg waits on barrier 1 + wg and passes to the next; warpgroup 0 goes
// first. All run n_tiles + 1 turns an item; with one item a block the last warpgroup passes one turn ahead
// (start) and not after its last. Persistent, every warpgroup passes after every turn, and warpgroup 0 takes
// the last warpgroup's final pass at the end.
template <int W, bool Persistent>
struct Turns {
  int wg;
  __device__ __forceinline__ void start() const {
    if (wg == W - 1) named_arrive(1, 256);
  }
  __device__ __forceinline__ void wait() const { named_sync(1 + wg, 256); }
  __device__ __forceinline__ void pass(bool last) const {
    // (2 - wg for two: with the modulo there, ptxas spills 16 bytes at D 128)
    if (Persistent || !(last && wg == W - 1)) named_arrive(W == 2 ? 2 - wg : 1 + (wg + 1) % W, 256);
  }
};

// The producer warpgroup: K and V tiles in visiting order (the last tile first), each into its stage once
// the consumers have released the tile that used it kStages visits earlier. One thread issues the TMA
// copies; Persistent, it also takes the items from sc.next and copies each item's Q tile.
template <typename T, typename C, bool Persistent>
__device__ __forceinline__ void producer(const Params& p, const Sched& sc, const Maps* maps, const Smem<C, Persistent>& m,
                                         volatile int* const slot, const Item& it0, int tid) {
  constexpr int D = C::kHeadDim, BM = C::kBlockM, BN = C::kBlockN, S = C::kStages;
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(C::kProducerRegs));
  const int i = tid - C::kConsumers;
  auto produce = [&](const Item& it, int vis) {  // vis: the rings' visits before this item's
    if (i != 0) return;  // one thread issues the TMA copies
    for (int j = 0; j < it.n_tiles; ++j) {
      const int v = vis + j, n = it.n_tiles - 1 - j, s = v % S;
      if (v >= S) mbar_wait_parity(m.empty_k(s), (v / S - 1) & 1);
      mbar_arrive_expect_tx(m.full_k(s), C::kTileBytes);  // the whole box counts, zeros past kv_len too
#pragma unroll
      for (int cb = 0; cb < D / 64; ++cb)
        tma_load_box(m.sK + s * C::kTileBytes + cb * BN * 128, &maps->k, cb * 64, it.hk, n * BN, it.b, m.full_k(s));
      if (v >= S) mbar_wait_parity(m.empty_v(s), (v / S - 1) & 1);
      mbar_arrive_expect_tx(m.full_v(s), C::kTileBytes);
#pragma unroll
      for (int cb = 0; cb < D / 64; ++cb)
        tma_load_box(m.sV + s * C::kTileBytes + cb * BN * 128, &maps->v, cb * 64, it.hk, n * BN, it.b, m.full_v(s));
    }
  };
  if constexpr (Persistent) {  // one thread takes the items and issues every copy, Q's too
    if (i != 0) return;
    int vis = 0;
    for (int uses = 0;; ++uses) {
      const int qb = uses % 2;
      if (uses >= 2) mbar_wait_parity(m.empty_q(qb), (uses / 2 - 1) & 1);
      const int w = static_cast<int>(atomicAdd(sc.next, 1u));
      slot[qb] = w;
      if (w >= sc.items) {  // none left: the consumers find w in the slot and stop
        mbar_arrive(m.full_q(qb));
        break;
      }
      const Item it = item_of<C>(p, sc, w);
      mbar_arrive_expect_tx(m.full_q(qb), C::kQBytes);  // releases the slot; Q's bytes complete the phase
#pragma unroll
      for (int cb = 0; cb < D / 64; ++cb)
        tma_load_box((qb ? m.sQ1 : m.sQ) + cb * BM * 128, &maps->q, cb * 64, it.h, it.m0, it.b, m.full_q(qb));
      produce(it, vis);
      vis += it.n_tiles;
    }
  } else {
    produce(it0, 0);
  }
}

// A consumer thread's place: warpgroup wg (query rows 64 wg .. + 63 of an item), warp wl within it, and the
// fragment coordinates g = lane / 4, t = lane % 4.
struct Place {
  int tid, lane, wg, wl, g, t;
};

// O += P V of ring visit v from the P in `a`: V MN-major (k16 step: two 8-key groups; LBO: next 64 columns).
template <typename T, typename C, bool Persistent>
__device__ __forceinline__ void pv(float (&o)[C::kOAcc], const Smem<C, Persistent>& m, int v,
                                   const uint32_t (&a)[C::kBlockN / 16][4]) {
  constexpr int BN = C::kBlockN;
  const unsigned vs = m.sV + (v % C::kStages) * C::kTileBytes;
#pragma unroll
  for (int kk = 0; kk < BN / 16; ++kk) mma_pv<T>(o, a[kk], wgmma::desc_sw128(vs + kk * 2048, BN * 128, 1024));
}

// Visit j of an item (key tile n_tiles - 1 - j; ring visit vis + j): S = Q K^T on this warpgroup's turn (and
// the previous visit's P V), the mask, the online softmax and P. kFirst: visit 0 with the overlap (no P V
// before it; a compile-time flag there, so that no wgmma sits behind a branch). kOdd picks the P buffers
// with the overlap: odd visits write pf_next and read pf, even ones the other way round (counted so that the
// last visit's P is in pf). Without the overlap both are pf: the P V retires before the softmax writes it.
// wg_row0: the warpgroup's first query row; row0: this thread's first (row0 + 8 its second).
template <typename T, typename C, bool Persistent, bool kFirst, bool kOdd>
__device__ __forceinline__ void visit(const Params& p, const Smem<C, Persistent>& m, const Place& pl,
                                      const Turns<C::kWarpgroups, Persistent>& turns, float scale_log2,
                                      int n_tiles, int vis, int wg_row0, int row0, unsigned q_desc_base, int j,
                                      float (&o)[C::kOAcc], float (&row_max)[2], float (&row_sum)[2],
                                      uint32_t (&pf)[C::kBlockN / 16][4], uint32_t (&pf_next)[C::kBlockN / 16][4]) {
  constexpr int D = C::kHeadDim, BM = C::kBlockM, BN = C::kBlockN, S = C::kStages;
  const int lane = pl.lane, t = pl.t;
  uint32_t(&cur)[BN / 16][4] = *[&] { if constexpr (C::kOverlap && kOdd) return &pf_next; else return &pf; }();
  uint32_t(&prev)[BN / 16][4] = *[&] { if constexpr (C::kOverlap && !kOdd) return &pf_next; else return &pf; }();
  const int n = n_tiles - 1 - j, v = vis + j, s = v % S;
  mbar_wait_parity(m.full_k(s), (v / S) & 1);
  // (No proxy fence: TMA writes K and V through the async proxy that wgmma reads by, and the full
  // barriers' phases order them.)
  if (j > 0) mbar_wait_parity(m.full_v((v - 1) % S), ((v - 1) / S) & 1);

  float sacc[64];
  turns.wait();
  wgmma::fence_operands(o);
  wgmma::fence();
  // S = Q K^T: head_dim / 16 k-steps; K-major descriptors (k16 step: 32 bytes, next column block: its size).
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks) {
    const uint64_t da = wgmma::desc_sw128(q_desc_base + (ks / 4) * (BM * 128) + (ks % 4) * 32, 16, 1024);
    const uint64_t db = wgmma::desc_sw128(m.sK + s * C::kTileBytes + (ks / 4) * (BN * 128) + (ks % 4) * 32, 16, 1024);
    wgmma::mma_ss_m64n128k16<T>(sacc, da, db, ks > 0);
  }
  if constexpr (C::kOverlap) {
    wgmma::commit_group();  // S alone, so that the softmax can wait for it while P V runs
    if constexpr (!kFirst) {
      pv<T>(o, m, v - 1, prev);
      wgmma::commit_group();
      turns.pass(false);
      wgmma::wait_group<1>();  // groups retire in order: S is done, P V may still run
    } else {
      turns.pass(false);
      wgmma::wait_group<0>();
    }
    wgmma::fence_operands(sacc);
    if (lane == 0) mbar_arrive(m.empty_k(s));  // this warp is done with K of visit j
  } else {
    if (j > 0) pv<T>(o, m, v - 1, prev);
    wgmma::commit_group();
    turns.pass(false);
    wgmma::wait_group<0>();
    wgmma::fence_operands(sacc);
    wgmma::fence_operands(o);
    if (lane == 0) {  // this warp is done with K of visit j and V of visit j - 1
      mbar_arrive(m.empty_k(s));
      if (j > 0) mbar_arrive(m.empty_v((v - 1) % S));
    }
  }

  // Keys past kv_len and, causal, keys after row + causal_offset score -inf.
  const int n0 = n * BN;
  if (n0 + BN > p.kv_len || (p.causal && n0 + BN - 1 > wg_row0 + p.causal_offset)) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = row0 + 8 * r;
      const int limit = p.causal ? min(p.kv_len, row + p.causal_offset + 1) : p.kv_len;  // keys < limit
#pragma unroll
      for (int jj = 0; jj < BN / 8; ++jj)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          if (n0 + 8 * jj + 2 * t + e >= limit) sacc[4 * jj + 2 * r + e] = -INFINITY;
    }
  }

  // Online softmax (tiled_flash.cuh's lazy_max_step): lazy reference max, alpha rescales O and the sums.
  float alpha[2], base[2];
  bool moved = false;
  float sum[2] = {0.0f, 0.0f};
  // Keys n0 .. n0 + live - 1 are the ones this warpgroup's last row sees (causal, past kv_len: fewer). The
  // upper 64-key half of the tile, when no row of the warpgroup sees it, skips its max and exp2: P = 0
  // there (on the causal diagonal of aligned tiles, warpgroup 0's). Bit-identical: the skipped values are
  // exp2(-inf) = 0 and maxima over -inf. Only with the overlap: the kernels without it run slower with the
  // branch. Not the lower half: with two warpgroups (the overlap's) it lacks keys only when q_len > kv_len,
  // and testing it spills 8 bytes in the D 64 persistent kernel.
  const int live = min(p.causal ? min(p.kv_len, wg_row0 + 64 + p.causal_offset) : p.kv_len, n0 + BN) - n0;
  const bool hi_live = !C::kOverlap || live > BN / 2;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float mx = row_max[r];
#pragma unroll
    for (int jj = 0; jj < BN / 16; ++jj) mx = fmaxf(mx, fmaxf(sacc[4 * jj + 2 * r], sacc[4 * jj + 2 * r + 1]));
    if (hi_live) {
#pragma unroll
      for (int jj = BN / 16; jj < BN / 8; ++jj)
        mx = fmaxf(mx, fmaxf(sacc[4 * jj + 2 * r], sacc[4 * jj + 2 * r + 1]));
    }
    moved |= lazy_max_step(row_max[r], mx, scale_log2, base[r], alpha[r]);
  }
  // P rounded to the input type: n8 blocks 2kk and 2kk + 1 of S are the A of k16 step kk of P V; kk from
  // k0 to k0 + BN / 32 - 1 is one 64-key half.
  auto exp_half = [&](int k0) {
#pragma unroll
    for (int kk = k0; kk < k0 + BN / 32; ++kk)
#pragma unroll
      for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int h2 = 0; h2 < 2; ++h2) {
          const int jj = 2 * kk + h2;
          const float p0 = ex2_approx(fmaf(sacc[4 * jj + 2 * r], scale_log2, -base[r]));
          const float p1 = ex2_approx(fmaf(sacc[4 * jj + 2 * r + 1], scale_log2, -base[r]));
          sum[r] += p0 + p1;
          cur[kk][h2 * 2 + r] = pack2<T>(p0, p1);
        }
  };
  exp_half(0);
  if (hi_live) {
    exp_half(BN / 32);
  } else {
#pragma unroll
    for (int kk = BN / 32; kk < BN / 16; ++kk)
#pragma unroll
      for (int e = 0; e < 4; ++e) cur[kk][e] = 0u;
  }
  if constexpr (C::kOverlap && !kFirst) {
    // The previous tile's P V has retired: O can take this tile's rescale, and its P buffer is free.
    wgmma::wait_group<0>();
    wgmma::fence_operands(o);
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) wgmma::fence_operands(prev[kk]);
    if (lane == 0) mbar_arrive(m.empty_v((v - 1) % S));  // done with V of visit j - 1
  }
  if (moved) {
#pragma unroll
    for (int k = 0; k < C::kOAcc; ++k) o[k] *= alpha[(k / 2) % 2];
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) row_sum[r] = row_sum[r] * alpha[r] + sum[r];
}

// O / rowsum of one item, staged through this warpgroup's own rows of its Q tile at sQb (the swizzled
// layout: conflict-free 4-byte stores), then written to global memory in 16-byte row segments.
template <typename T, typename C, bool Persistent>
__device__ __forceinline__ void store_o(const Params& p, const Smem<C, Persistent>& m, unsigned char* smem_raw,
                                        const Place& pl, const Item& it, unsigned sQb, const float (&o)[C::kOAcc],
                                        const float (&row_sum)[2]) {
  constexpr int D = C::kHeadDim, BM = C::kBlockM, W = C::kWarpgroups;
  const int tid = pl.tid, wg = pl.wg, t = pl.t;
  const int64_t q_stride = static_cast<int64_t>(p.heads_q) * D;
  unsigned char* const q_ptr = smem_raw + (sQb - m.raw);
  T* const gO = static_cast<T*>(p.o) + it.q_off;
  int o_row = wg * 64 + pl.wl * 16 + pl.g;  // this thread's first row within the Q tile (opaque, as wtid below)
  if constexpr (Persistent) asm volatile("" : "+r"(o_row));
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float l = row_sum[r];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    const int row = o_row + 8 * r;  // within the Q tile
#pragma unroll
    for (int jj = 0; jj < D / 8; ++jj)
      *reinterpret_cast<uint32_t*>(q_ptr + (jj / 8) * (BM * 128) + row * 128 + (((jj % 8) ^ (row % 8)) << 4) + 4 * t) =
          pack2<T>(o[4 * jj + 2 * r] * inv, o[4 * jj + 2 * r + 1] * inv);
  }
  named_sync(1 + W + wg, 128);
  if constexpr (Persistent) {
    // Row segment c of rows row0, row0 + kStep, ...: one shared and one global address, stepped (the
    // swizzle's row % 8 is the same for every step), from a thread index opaque here, so that the compiler
    // does not hold each step's addresses across the item loop (they spill with three warpgroups).
    int wtid = tid % 128;
    asm volatile("" : "+r"(wtid));
    constexpr int kStep = 128 / C::kChunks;
    const int e_row0 = wg * 64 + wtid / C::kChunks, e_c = wtid % C::kChunks;
    const unsigned char* e_src = q_ptr + (e_c / 8) * (BM * 128) + e_row0 * 128 + (((e_c % 8) ^ (e_row0 % 8)) << 4);
    T* e_dst = gO + e_row0 * q_stride + e_c * 8;
#pragma unroll
    for (int k = 0; k < 64 / kStep; ++k) {
      if (e_row0 + k * kStep < it.rows)
        *reinterpret_cast<uint4*>(e_dst + k * kStep * q_stride) = *reinterpret_cast<const uint4*>(e_src + k * kStep * 128);
    }
  } else {
    const int wtid = tid % 128;
#pragma unroll
    for (int k = 0; k < 64 * C::kChunks / 128; ++k) {
      const int idx = k * 128 + wtid;
      const int row = wg * 64 + idx / C::kChunks, c = idx % C::kChunks;
      if (row < it.rows)
        *reinterpret_cast<uint4*>(gO + row * q_stride + c * 8) =
            *reinterpret_cast<const uint4*>(q_ptr + (c / 8) * (BM * 128) + row * 128 + (((c % 8) ^ (row % 8)) << 4));
    }
  }
}

// One item: its Q tile in the buffer at sQb (copied), its K/V visits from ring visit `vis` on; O is written
// to global memory through this warpgroup's rows of that buffer. pf, pf_next: P's register buffers (with the
// overlap, this tile's P goes into one while the previous tile's P V reads the other).
template <typename T, typename C, bool Persistent>
__device__ __forceinline__ void consume(const Params& p, const Smem<C, Persistent>& m, unsigned char* smem_raw,
                                        const Place& pl, const Turns<C::kWarpgroups, Persistent>& turns,
                                        float scale_log2, const Item& it, const int vis, const unsigned sQb,
                                        uint32_t (&pf)[C::kBlockN / 16][4], uint32_t (&pf_next)[C::kBlockN / 16][4]) {
  constexpr int S = C::kStages;
  float o[C::kOAcc];
#pragma unroll
  for (int k = 0; k < C::kOAcc; ++k) o[k] = 0.0f;
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f};  // rows g and g + 8 of this warp
  const int n_tiles = it.n_tiles;
  const int wg_row0 = it.m0 + pl.wg * 64;        // first query row of this warpgroup
  const int row0 = wg_row0 + pl.wl * 16 + pl.g;  // this thread's rows: row0, row0 + 8
  const unsigned q_desc_base = sQb + pl.wg * 64 * 128;
  auto step = [&](const int j, auto first_c, auto odd_c) {
    visit<T, C, Persistent, decltype(first_c)::value, decltype(odd_c)::value>(
        p, m, pl, turns, scale_log2, n_tiles, vis, wg_row0, row0, q_desc_base, j, o, row_max, row_sum, pf, pf_next);
  };

  const std::true_type first{}, odd{};
  const std::false_type next{}, even{};
  if constexpr (C::kOverlap) {
    // The buffers alternate by unrolling: the visits after a prefix run in pairs (the first writes pf_next,
    // the second pf), so that the last visit's P is in pf. The prefix is one visit (odd n_tiles) or two.
    int j = 1;
    if (n_tiles % 2) {
      step(0, first, even);
    } else {
      step(0, first, odd);
      step(1, next, even);
      j = 2;
    }
    for (; j < n_tiles; j += 2) {
      step(j, next, odd);
      step(j + 1, next, even);
    }
  } else {
    for (int j = 0; j < n_tiles; ++j) step(j, next, even);
  }
  // The last tile's P V, on a last turn.
  const int last = vis + n_tiles - 1;
  mbar_wait_parity(m.full_v(last % S), (last / S) & 1);
  turns.wait();
  wgmma::fence_operands(o);
  wgmma::fence();
  pv<T>(o, m, last, pf);
  wgmma::commit_group();
  turns.pass(true);
  wgmma::wait_group<0>();
  wgmma::fence_operands(o);
  if (Persistent && pl.lane == 0) mbar_arrive(m.empty_v(last % S));  // the ring runs on into the next item
  store_o<T>(p, m, smem_raw, pl, it, sQb, o, row_sum);
}

// The consumer warpgroups: warpgroup wg owns query rows m0 + 64 wg .. + 63 of each item. Persistent, they
// take each item from the slot the producer filled, behind its Q buffer's full barrier; otherwise they copy
// their rows of the block's Q tile themselves.
template <typename T, typename C, bool Persistent>
__device__ __forceinline__ void consumer(const Params& p, const Sched& sc, const Smem<C, Persistent>& m,
                                         unsigned char* smem_raw, volatile int* const slot, const Item& it0, int tid) {
  constexpr int D = C::kHeadDim, BM = C::kBlockM, BN = C::kBlockN, W = C::kWarpgroups;
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(C::kConsumerRegs));
  const int warp = tid / 32, lane = tid % 32;
  const Place pl{tid, lane, warp / 4, warp % 4, lane / 4, lane % 4};
  const int wg = pl.wg;
  const int64_t q_stride = static_cast<int64_t>(p.heads_q) * D;
  const float scale_log2 = p.scale_log2;
  const Turns<W, Persistent> turns{wg};
  uint32_t pf[BN / 16][4], pf_next[BN / 16][4];

  if constexpr (Persistent) {
    turns.start();
    int vis = 0;
    for (int uses = 0;; ++uses) {
      const int qb = uses % 2;
      mbar_wait_parity(m.full_q(qb), (uses / 2) & 1);
      const int w = slot[qb];
      if (w >= sc.items) break;
      const Item it = item_of<C>(p, sc, w);
      if (it.n_tiles == 0) {  // causal with q_len > kv_len: no row of this tile sees a key
        T* const gZ = static_cast<T*>(p.o) + it.q_off;
        for (int idx = tid % 128; idx < 64 * C::kChunks; idx += 128) {
          const int row = wg * 64 + idx / C::kChunks;
          if (row < it.rows)
            *reinterpret_cast<uint4*>(gZ + row * q_stride + (idx % C::kChunks) * 8) = make_uint4(0, 0, 0, 0);
        }
      } else {
        // Q by TMA, as K and V: no proxy fence before wgmma reads it.
        consume<T>(p, m, smem_raw, pl, turns, scale_log2, it, vis, qb ? m.sQ1 : m.sQ, pf, pf_next);
        vis += it.n_tiles;
      }
      // Each thread's own arrival orders its reads of the buffer and of the slot before the producer's next
      // writes to them (one arrival a warp after __syncwarp() is as ordered, but compute-sanitizer's racecheck
      // reports it as a hazard).
      // TMA (the async proxy) writes the next Q over the O this thread staged here through the generic one.
      wgmma::fence_proxy_async_shared();
      mbar_arrive(m.empty_q(qb));
    }
    if (wg == 0) named_sync(1, 256);  // the last warpgroup's final pass
  } else {
    load_tile<C, 128, 64>(m.sQ + wg * 64 * 128, BM * 128, static_cast<const T*>(p.q) + it0.q_off + wg * 64 * q_stride,
                          static_cast<int>(q_stride), it0.rows - wg * 64, tid % 128);
    cp_async_commit();
    cp_async_wait<0>();
    wgmma::fence_proxy_async_shared();
    named_sync(1 + W + wg, 128);
    turns.start();
    consume<T>(p, m, smem_raw, pl, turns, scale_log2, it0, 0, m.sQ, pf, pf_next);
  }
}

// The kernel's body. Persistent = false: one block a work item (the grid is (q tiles, heads, batch), the
// heaviest causal tiles first). Persistent = true (wgmma_flash.h's persistent()): one block an SM, whose
// producer takes the next item from sc.next once it has issued the last copies of the one before and copies
// its Q tile too, into the other of two Q buffers, so that an item's Q and first K/V tiles land while the
// consumers finish the previous one. The K/V rings' visits, the Q buffers' uses and the ping-pong turns then
// count across items.
template <typename T, typename C, bool Persistent>
__device__ __forceinline__ void body(const Params& p, const Sched& sc, const Maps* maps) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int S = C::kStages;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const Smem<C, Persistent> m(smem_addr(smem_raw));
  volatile int* const slot = reinterpret_cast<volatile int*>(smem_raw + (m.bars + 8 * (4 * S + 4) - m.raw));  // [2]
  const int tid = threadIdx.x;

  Item it0{};  // the block's item (one item a block)
  if constexpr (!Persistent) {
    it0 = item_at<C>(p, static_cast<int>(gridDim.x - 1 - blockIdx.x), blockIdx.y, blockIdx.z);
    if (it0.n_tiles == 0) {  // causal with q_len > kv_len: no row of this tile sees a key
      const int64_t q_stride = static_cast<int64_t>(p.heads_q) * C::kHeadDim;
      T* gZ = static_cast<T*>(p.o) + it0.q_off;
      for (int idx = tid; idx < it0.rows * C::kChunks; idx += C::kThreads)
        *reinterpret_cast<uint4*>(gZ + (idx / C::kChunks) * q_stride + (idx % C::kChunks) * 8) = make_uint4(0, 0, 0, 0);
      return;
    }
  }
  if (tid == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(m.full_k(s), 1);  // the producer's arrive.expect_tx, then the tile's bytes as TMA lands them
      mbar_init(m.full_v(s), 1);
      mbar_init(m.empty_k(s), C::kConsumers / 32);  // one arrival a consumer warp
      mbar_init(m.empty_v(s), C::kConsumers / 32);
    }
    if constexpr (Persistent) {
      for (int qb = 0; qb < 2; ++qb) {
        mbar_init(m.full_q(qb), 1);  // the producer's arrive.expect_tx (releasing the slot), then Q's bytes
        mbar_init(m.empty_q(qb), C::kConsumers);  // every consumer thread, after its last read of the buffer
      }
    }
  }
  __syncthreads();

  if (tid >= C::kConsumers) {
    producer<T>(p, sc, maps, m, slot, it0, tid);
    return;  // TMA copies need no wait here: the consumers wait for their bytes on the full barriers
  }
  consumer<T>(p, sc, m, smem_raw, slot, it0, tid);
#else
  __trap();  // not built for sm_90a: supports() refuses before any launch
#endif
}

template <typename T, typename C>
__global__ void __launch_bounds__(C::kThreads, 1) kernel(const Params p, const __grid_constant__ Maps maps) {
  body<T, C, false>(p, Sched{}, &maps);
}

template <typename T, typename C>
__global__ void __launch_bounds__(C::kThreads, 1)
    kernel_persistent(const Params p, const Sched sc, const __grid_constant__ Maps maps) {
  body<T, C, true>(p, sc, &maps);
}

// Bytes of one batch entry of a tensor of `len` rows of `heads` heads: a tensor map's outermost stride,
// which must be under 2^40.
int64_t batch_bytes(const Problem& p, int64_t len, int64_t heads) {
  return len * heads * p.head_dim * static_cast<int64_t>(size_bytes(p.dtype));
}

// The tensor maps for a problem supports() accepts (Maps), encoded on the host before each launch through the
// runtime's driver entry point; Q's only when q_box_rows > 0 (the persistent kernel's Q tile).
Maps make_maps(const Problem& pr, int q_box_rows) {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    SB_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw std::runtime_error("wgmma_flash: the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or newer needed)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  const CUtensorMapDataType type =
      pr.dtype == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  // A (head_dim, heads, len, batch) tensor at `base`, read in boxes of 64 x 1 x box_rows x 1.
  auto encode_one = [&](const void* base, int64_t heads, int64_t len, int box_rows, const char* what) {
    const cuuint64_t e = size_bytes(pr.dtype);
    const cuuint64_t dims[4] = {static_cast<cuuint64_t>(pr.head_dim), static_cast<cuuint64_t>(heads),
                                static_cast<cuuint64_t>(len), static_cast<cuuint64_t>(pr.batch)};
    const cuuint64_t strides[3] = {dims[0] * e, dims[0] * dims[1] * e, static_cast<cuuint64_t>(batch_bytes(pr, len, heads))};
    const cuuint32_t box[4] = {64, 1, static_cast<cuuint32_t>(box_rows), 1}, unit[4] = {1, 1, 1, 1};
    CUtensorMap m;
    const CUresult r = encode(&m, type, 4, const_cast<void*>(base), dims, strides, box, unit,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
      throw std::runtime_error(std::string("wgmma_flash: cuTensorMapEncodeTiled refused ") + what + " (CUresult " +
                               std::to_string(static_cast<int>(r)) + ")");
    return m;
  };
  Maps m{};
  m.k = encode_one(pr.k, pr.heads_kv, pr.kv_len, 128, "k");
  m.v = encode_one(pr.v, pr.heads_kv, pr.kv_len, 128, "v");
  if (q_box_rows > 0) m.q = encode_one(pr.q, pr.heads_q, pr.q_len, q_box_rows, "q");
  return m;
}

// The persistent kernel's configuration for C: C itself at D 64; at D 128 without the intra-warpgroup
// overlap. With it, the item loop's state costs the consumers an 8-byte spill (the row offset and half a
// zero-fill offset, stored once and loaded an item), which the ci preset refuses; one P buffer frees 32
// registers a thread. It keeps most of the persistent gain where an item visits at most 8 K/V tiles and
// loses past it, hence kPersistentMaxMeanTilesD128.
template <typename C>
using PersistentConfig = std::conditional_t<C::kHeadDim == 128, Config<128, 2, false>, C>;

template <typename T, typename C>
void launch_config(const Problem& pr, cudaStream_t stream) {
  const Params p = make_params(pr);
  if (const int sms = device_sm_count(); persistent(pr, sms)) {
    using PC = PersistentConfig<C>;
    auto* kern = kernel_persistent<T, PC>;
    constexpr int kSmem = PC::kSmemBytes + PC::kQBytes + 4 * 8 + 2 * 4;  // a second Q buffer, its barriers, slots
    static_assert(kSmem <= 227 * 1024, "over the 227 KB of shared memory a block may have");
    static const cudaError_t opt_in = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    SB_CUDA_CHECK(opt_in);
    const Sched sc{static_cast<int>(q_tiles(pr)), static_cast<int>(work_items(pr)),
                   static_cast<unsigned*>(pr.workspace)};
    SB_CUDA_CHECK(cudaMemsetAsync(sc.next, 0, sizeof(unsigned), stream));
    kern<<<static_cast<unsigned>(sms), PC::kThreads, kSmem, stream>>>(p, sc, make_maps(pr, PC::kBlockM));
    SB_LAUNCH_CHECK();
    return;
  }
  auto* kern = kernel<T, C>;
  static const cudaError_t opt_in = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes);
  SB_CUDA_CHECK(opt_in);
  const dim3 grid(static_cast<unsigned>(q_tiles(pr)), static_cast<unsigned>(pr.heads_q),
                  static_cast<unsigned>(pr.batch));
  kern<<<grid, C::kThreads, C::kSmemBytes, stream>>>(p, make_maps(pr, 0));
  SB_LAUNCH_CHECK();
}

template <typename T>
void launch_typed(const Problem& p, cudaStream_t stream) {
  if (p.head_dim == 128)
    launch_config<T, Config<128, 2>>(p, stream);
  else if (warpgroups(p) == 3)
    launch_config<T, Config<64, 3>>(p, stream);
  else
    launch_config<T, Config<64, 2>>(p, stream);
}

}  // namespace

std::string supports(const Problem& p) {
  if (p.dtype != DType::f16 && p.dtype != DType::bf16)
    return std::string(name(p.dtype)) + " is not supported: wgmma here takes fp16 or bf16 operands";
  if (std::string why = params_refusal(p); !why.empty()) return why;
  if (batch_bytes(p, p.kv_len, p.heads_kv) >= (int64_t{1} << 40) || batch_bytes(p, p.q_len, p.heads_q) >= (int64_t{1} << 40))
    return "a batch entry of q, k and v must be under 2^40 bytes (the TMA tensor map's stride limit)";
  if (!SB_BUILT_FOR_SM90A) return "not built for sm_90a (wgmma): configure with CMAKE_CUDA_ARCHITECTURES including 90a";
  if (const int major = device_major(); major != 9)
    return major == 0 ? "wgmma needs an sm_90 GPU (H100/H200); none is visible"
                      : "wgmma needs an sm_90 GPU (H100/H200); this one is sm_" + std::to_string(major) + "x";
  return "";
}

// The persistent kernel's work counter (persistent(), wgmma_flash.h); one 256-byte-aligned slot.
std::size_t workspace_bytes(const Problem& p) { return persistent(p, device_sm_count()) ? 256 : 0; }

void launch(const Problem& p, cudaStream_t stream) {
  if (p.dtype == DType::bf16)
    launch_typed<__nv_bfloat16>(p, stream);
  else
    launch_typed<__half>(p, stream);
}

}  // namespace sb::attention::wgmma_flash
