// decode_splitk's launch plan: how many query rows and kv heads a block computes, the key tile, and how
// many KV splits run in parallel. A pure function of the problem and the SM count (no CUDA calls), so the
// CPU tests check it on any machine; launch() queries the SM count once per device and calls it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "attention/attention.h"

namespace sb::attention::decode_splitk {

inline constexpr int kThreads = 256;          // 8 warps per split block
inline constexpr int kDimsPerLane = 8;        // one 16-byte vector of a K or V row per lane
inline constexpr int kMaxQLen = 8;            // query tokens (decode, or speculative decoding)
inline constexpr int kMaxSplits = 256;        // a forced Problem::num_splits is clamped to this
inline constexpr int kMaxHeuristicSplits = 128;
inline constexpr int64_t kMinSplitKeys = 128; // the heuristic never makes a chunk shorter than this
inline constexpr double kNoSplitFill = 0.8;   // blocks >= 80% of one wave without splitting: no split
inline constexpr double kWaveEfficiency = 0.95;
inline constexpr double kLog2e = 1.4426950408889634;  // scores are kept in the log2 domain (exp2)

// The cluster merge: a small tensor-core plan (K + V at most kClusterMaxKvBytes, its blocks at most half the
// SMs) of 2 to kMaxClusterSplits splits runs its split blocks as thread-block clusters of num_splits blocks,
// one block an SM, that merge their partials through distributed shared memory (st.async into each row's
// owner block, completing on its mbarrier; decode_splitk_tc.cu's cluster_merge): no workspace, no combine
// kernel. The heuristic caps such a plan at kMaxClusterSplits splits. At the default decode shapes that is
// b1 GQA KV 1024 and 4096 (8 splits, 64 blocks in 8 clusters); every other shape keeps the partials and the
// combine kernel. The limits keep clusters few and small: large or many clusters (b4 KV 131072, 32 clusters
// of 4) run slower than the combine kernel.
inline constexpr int kMaxClusterSplits = 8;  // the portable cluster size
inline constexpr std::size_t kClusterMaxKvBytes = std::size_t{32} << 20;
// Paired clusters: an unsplit tensor-core grid of one wave (at most SMs rounded down to even blocks, one
// block an SM) over more than half the SMs, with an even heads_kv, launches as clusters of kPairBlocks
// blocks: the adjacent kv heads of one sequence, whose blocks read neighbouring pieces (head_dim 16-bit
// values) of the same key rows. On the H200 a pair lands on one TPC; it passes a cluster barrier every
// tile, so neither block gets more than two tiles ahead of the other. Clusters of 4 do not fit a 128-block
// grid in one wave (30 of them fit at one block an SM). A grid of half the SMs or fewer stays plain: a
// block that waits for its partner every tile loses what it does not hide with the other blocks of a full
// wave.
inline constexpr int kPairBlocks = 2;

// The tensor-core split kernel (GQA: 2-8 query rows of one kv head a block, head_dim 64 or 128; see
// decode_splitk_tc.cu): 4 warps, each with its own cp.async pipeline over kTcWarpKeys keys of every
// kTcTileKeys-key tile, Q (16 rows, padded) in shared memory as given. Stages: 3 at d128, 6 at d64, 96 KB
// of K and V a block either way (+ 4 or 2 KB of Q); two blocks fit an SM.
inline constexpr int kTcThreads = 128;
inline constexpr int kTcWarpKeys = 16;
inline constexpr int kTcTileKeys = kTcThreads / 32 * kTcWarpKeys;  // 64
constexpr int tc_stages(int head_dim) { return head_dim == 128 ? 3 : 6; }
constexpr int tc_warp_stage_bytes(int head_dim) { return 2 * kTcWarpKeys * head_dim * 2; }  // K and V, 16-bit
constexpr int tc_smem_bytes(int head_dim) {
  return kTcThreads / 32 * tc_stages(head_dim) * tc_warp_stage_bytes(head_dim) + 16 * head_dim * 2;
}
// Over an FP8 cache: a warp's stages hold e4m3 bytes (half a 16-bit stage), widened a tile at a time into one
// 16-bit tile of the warp's (the 16-bit stage layout the MMA loop reads). 16 KB of copies in flight a warp at
// both head dims, and two blocks an SM.
constexpr int tc_fp8_stages(int head_dim) { return head_dim == 128 ? 4 : 8; }
constexpr int tc_fp8_warp_stage_bytes(int head_dim) { return 2 * kTcWarpKeys * head_dim; }  // K and V, e4m3
constexpr int tc_fp8_smem_bytes(int head_dim) {
  return kTcThreads / 32 * (tc_fp8_stages(head_dim) * tc_fp8_warp_stage_bytes(head_dim) +
                            tc_warp_stage_bytes(head_dim)) + 16 * head_dim * 2;
}

// Keys a lane owns per tile (16 B of K and 16 B of V each): 2, so a tile stage is 256 threads x 2 keys x
// 2 (K, V) x 16 B = 16 KB at every head_dim. The FMA kernel computes at most kFmaMaxRows rows a block
// (more rows are GQA at head_dim <= 128: the tensor-core kernel; head_dim 256 stops at 4): Q and the
// accumulator take 16 registers a row, so its 4 rows fit the 128-register cap of kFmaBlocksPerSm = 2
// blocks an SM. kFmaBlocksPerSm is also the slots an SM the split heuristic counts for every FMA plan
// (counting the 3 that fit at fewer registers makes more, shorter chunks and a longer combine).
constexpr int keys_per_lane(int /*rows_per_block*/) { return 2; }
inline constexpr int kFmaMaxRows = 4;
inline constexpr int kFmaBlocksPerSm = 2;
// The resident blocks an SM asked of ptxas (__launch_bounds__) for a block of `rows` query rows: one-row
// blocks at head_dim <= 128 (MHA decode at q_len 1) fit 4 at <= 64 registers (no spills); the rest keep
// kFmaBlocksPerSm (128 registers: q_len-2 MHA and head_dim 256 would spill at 64). MHA b64's 1,024 blocks
// then run in 1.94 waves of 528 instead of 2.59 of 396.
constexpr int fma_min_blocks(int rows, int head_dim) {
  return rows == 1 && head_dim <= 128 ? 4 : kFmaBlocksPerSm;
}
// cp.async stages of 16 KB per block: each thread copies exactly the 16-byte pieces it later reads, so
// the pipeline needs no block barrier; all `stages` tiles are in flight while one is computed. 4 stages
// at 2-3 blocks an SM, 3 at 4 blocks: 192 KB of shared memory and of loads in flight an SM at MHA, 128 KB
// at 2 blocks (Little's law at ~4.5 TB/s and ~1-2 us loaded latency over 132 SMs needs 34-68 KB).
constexpr int pipeline_stages(int rows, int head_dim) { return fma_min_blocks(rows, head_dim) == 4 ? 3 : 4; }

struct Plan {
  bool tensor_cores = false;  // the tensor-core kernel: rows_per_block >= 2, heads_per_block 1, head_dim <= 128
  int rows_per_block = 1;  // query rows (q heads of one kv head x query tokens) per block: 1, 2, 4 or 8
                           // (8 only on tensor cores)
  int heads_per_block = 1; // adjacent kv heads a block computes: 2 at MHA with q_len <= 2, even heads_kv and
                           // head_dim <= 128 (rows_per_block is then 1 or 2), else 1
  int64_t row_blocks = 1;  // ceil(group * q_len / rows_per_block): > 1 re-reads K and V (MQA, many tokens)
  int tile_keys = 0;       // keys per block iteration: kTcTileKeys (tensor cores), else one FMA stage,
                           // kThreads / (head_dim / 8 * heads_per_block) * 2
  int blocks_per_sm = 0;   // split blocks per SM that the heuristic counts as one wave: the FMA kernel's
                           // resident blocks (kFmaBlocksPerSm, register bound); 1 for the tensor-core
                           // kernel (two fit, but one keeps 96 KB of K and V in flight, enough for HBM:
                           // b16 KV 8192 ran 134-136 us unsplit against 139-142 us at 2 splits)
  int64_t tiles = 0;       // ceil(kv_len / tile_keys)
  int num_splits = 1;      // split blocks per (batch, kv head(s), row block); 1 = O written directly, no combine
  int64_t chunk_keys = 0;  // keys per split, a multiple of tile_keys; split s reads [s * chunk, (s + 1) * chunk)
  bool cluster_combine = false;  // each unit's split blocks are one cluster and merge in distributed
                                 // shared memory (no workspace, no combine kernel; kClusterMaxKvBytes)
  bool paired_clusters = false;  // one split, one row block, even heads_kv, a grid over half the SMs and at
                                 // most SMs rounded down to even (one wave): clusters of kPairBlocks kv heads
                                 // in step
};

// The blocks of each cluster a plan launches its split grid in: num_splits (cluster_combine), kPairBlocks
// (paired_clusters), 0 for a plain grid.
inline int cluster_blocks(const Plan& plan) {
  return plan.cluster_combine ? plan.num_splits : plan.paired_clusters ? kPairBlocks : 0;
}

// The split count for `blocks` independent (batch, kv head, row block) units over `tiles` key tiles, on a
// GPU with `slots` = SMs x blocks_per_sm resident blocks. FlashAttention-2's wave-efficiency rule
// (flash_api.cpp, num_splits_heuristic), made stricter for a memory-bound kernel:
//   - blocks >= kNoSplitFill * slots: 1 (the batch already fills the GPU; no combine pass).
//   - candidates s = 1 .. min(kMaxHeuristicSplits, tiles / min_tiles_per_split), only those for which
//     s splits of ceil(tiles / s) tiles leave no chunk empty;
//     efficiency(s) = waves / ceil(waves) with waves = blocks * s / slots;
//   - the smallest candidate whose efficiency is >= kWaveEfficiency x the best one (FA2 uses 0.85;
//     a partly empty wave of a bandwidth-bound kernel leaves HBM idle, so we ask for fuller waves).
// Worked example, H200 (132 SMs), batch 1, 8 kv heads, 4 q heads each, head_dim 128, kv_len 4096: the
// tensor-core kernel, 1 slot an SM (slots 132); blocks = 8, tiles of 64 keys -> tiles = 64, min 2 tiles
// (128 keys) a split -> s <= 32. efficiency(s) = 8s / 132 for s <= 16 (one wave): 0.970 at s = 16; for
// s = 17 .. 32 two waves, at best 256 / 264 = 0.970 at s = 32. The smallest s with efficiency >= 0.95 x
// 0.970 = 0.921 is 16 (15 gives 0.909), and 16 chunks of 4 tiles leave none empty: s = 16, chunks of
// 256 keys, 128 blocks (one per SM) plus the combine; but 16 MiB of K and V and 8 x 8 blocks <= 66 make it
// a cluster-merge plan, capped at 8 splits (min 8 tiles a split): 8 chunks of 512 keys, 64 blocks in 8
// clusters, no combine. batch 16, kv_len 8192: blocks 128 >= 0.8 x 132 ->
// 1 split (the batch fills the GPU; no combine). MHA (32 q and kv heads, one row a block: the FMA kernel,
// 2 slots an SM, kv head pairs), batch 1, kv_len 4096: blocks 16, tiles of 16 keys -> 256 tiles, min 8
// a split; efficiency(16) = 256 / 264 = 0.970 -> 16 splits of 256 keys.
int num_splits_heuristic(int64_t blocks, int64_t tiles, int64_t min_tiles_per_split, int64_t slots);

// The plan for a (valid, supported) problem on a GPU with sm_count SMs. problem.num_splits > 0 forces
// min(num_splits, kMaxSplits) splits: chunks past the last key are then empty (they write lse = -inf
// and the combine ignores them). The heuristic never makes empty chunks. Its units are (batch, block of
// heads_per_block kv heads, row block).
Plan make_plan(const Problem& p, int sm_count);

// Workspace for the plan: per split, every output row's partial O (fp32, head_dim values) and its
// log2-sum-exp (fp32); 0 when num_splits == 1.
std::size_t workspace_bytes(const Plan& plan, const Problem& p);

// The fixed cost of a plan's launches, for the report's note on where b1 decode's time goes:
// launch_floor launches empty kernels with the plan's split grid (blocks, threads, dynamic shared memory,
// cluster) and, where the plan has one, its combine grid with the PDL handshake: what the launches cost
// with none of the work (bench_attention's floor/decode_splitk_launch rows). Tensor-core plans only;
// launch_floor_supports says why not, "" if supported.
std::string launch_floor_supports(const Problem& p);
void launch_floor(const Problem& p, cudaStream_t stream);
// Clusters of `cluster` (1-16; past 8 is a non-portable size) blocks of p's clustered tensor-core split
// kernel, at its shared memory, that the device holds at once (cudaOccupancyMaxActiveClusters). A
// cluster plan launches batch x heads_kv x row_blocks clusters of num_splits, a paired plan batch x heads_kv
// / kPairBlocks clusters of kPairBlocks: more than this run in waves (both kernels have kTcThreads threads
// and kClusterSmemBytes of shared memory; the query uses the cluster-merge one).
int max_active_clusters(const Problem& p, int cluster);

// Paged decode (kernels/paged_attention's paged_splitk): the tensor-core split kernel and the combine over a
// paged cache, each sequence of its own length. p is the problem as the kernels read it: kv_len the longest
// sequence, k and v the page pools ([num_pages, page_size, heads_kv, head_dim]); plan a tensor-core plan
// (make_plan) whose chunk_keys and num_splits the caller set for the ragged batch and whose clusters are off;
// the workspace holds workspace_bytes(plan, p). Sequences shorter than the grid's splits leave their last
// splits empty (lse -inf, which the combine ignores). page_size is a multiple of 16: a lane's consecutive
// key rows never cross a page.
struct PagedKv {
  const int32_t* seq_lens = nullptr;     // [batch], device
  const int32_t* block_table = nullptr;  // [batch, max_pages], device
  int64_t page_size = 0, max_pages = 0;
  // K and V as FP8 e4m3 bytes (the pools' rows heads_kv * head_dim bytes), each value the cache's value
  // divided by its scale; Q and O stay in the problem's dtype.
  bool fp8_e4m3 = false;
  float k_scale = 1.0f, v_scale = 1.0f;
};
void launch_paged(const Problem& p, const Plan& plan, const PagedKv& kv, cudaStream_t stream);

// The variant's entry points (registered by variants.def; defined in decode_splitk.cu).
std::string supports(const Problem& p);
std::size_t workspace_bytes(const Problem& p);
void launch(const Problem& p, cudaStream_t stream);

}  // namespace sb::attention::decode_splitk
