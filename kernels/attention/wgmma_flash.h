// wgmma_flash's launch plan: how many consumer warpgroups (64 query rows each) a block has. A pure function
// of the problem, and whether blocks are persistent, of the problem and the SM count (no CUDA calls), so the
// CPU tests check them on any machine; wgmma_flash.cu calls them.
#pragma once

#include <algorithm>
#include <cstdint>

#include "attention/attention.h"

namespace sb::attention::wgmma_flash {

// Head dim 128: two warpgroups (128 query rows a block), each overlapping its softmax with its own P V
// (two P buffers: 232 registers a thread). Head dim 64: three warpgroups (192 rows) without that overlap
// (160 registers: no room for a second P buffer), except causal problems shorter than
// kThreeWarpgroupMinCausalLen query rows, which keep two.
// Three warpgroups at D 64 put two softmaxes behind each warpgroup's MMAs; at causal s512 and s1024 a
// 192-row tile wastes more of the diagonal and of the last tile than a 128-row one, so two warpgroups with
// the overlap run there.
inline constexpr int64_t kThreeWarpgroupMinCausalLen = 2048;

inline int warpgroups(const Problem& p) {
  if (p.head_dim != 64) return 2;
  return p.causal && p.q_len < kThreeWarpgroupMinCausalLen ? 2 : 3;
}

// Q tiles of 64 x warpgroups(p) rows a (batch, q head).
inline int64_t q_tiles(const Problem& p) {
  const int64_t rows = 64 * warpgroups(p);
  return (p.q_len + rows - 1) / rows;
}

// Work items: Q tiles times heads and batch (the default grid's blocks).
inline int64_t work_items(const Problem& p) { return q_tiles(p) * p.heads_q * p.batch; }

// The K/V tiles (128 keys) the Q tiles of one (batch, q head) visit in all, as wgmma_flash.cu's item_at
// counts them: every tile unmasked; causal (bottom-right), those up to the last key the tile's last row sees.
inline int64_t kv_tiles_per_head(const Problem& p) {
  const int64_t bm = 64 * warpgroups(p), all = (p.kv_len + 127) / 128;
  if (!p.causal) return q_tiles(p) * all;
  int64_t sum = 0;
  for (int64_t m0 = 0; m0 < p.q_len; m0 += bm) {
    const int64_t last_key = std::min(m0 + bm, p.q_len) - 1 + (p.kv_len - p.q_len);
    sum += last_key < 0 ? 0 : std::min(all, last_key / 128 + 1);
  }
  return sum;
}

// Persistent blocks (one an SM, each taking the next work item from a counter when its producer is free,
// the producer copying the next item's Q by TMA while the consumers finish the last) once there are at
// least kPersistentMinWaves items an SM and an item visits at most kPersistentMaxMeanTiles K/V tiles on
// average at head_dim 64, kPersistentMaxMeanTilesD128 at 128; else one block an item. They save a block's
// start (barriers, first loads) and end (the O store) a work item, which weigh less the more tiles an item
// visits.
// D 128: the persistent kernel runs without the intra-warpgroup overlap (wgmma_flash.cu's PersistentConfig;
// with it the kernel spills), so past 8 tiles an item it loses what the overlap buys. Below two waves most
// blocks would take one item and pay the producer's Q copy for nothing; 2 is a guess at the crossover, not
// measured. Past 2^31 - 1 items the counter would overflow: one block an item.
inline constexpr int kPersistentMinWaves = 2;
inline constexpr int kPersistentMaxMeanTiles = 64;
inline constexpr int kPersistentMaxMeanTilesD128 = 8;
inline bool persistent(const Problem& p, int sm_count) {
  if ((p.head_dim != 64 && p.head_dim != 128) || sm_count <= 0) return false;
  const int64_t max_tiles = p.head_dim == 64 ? kPersistentMaxMeanTiles : kPersistentMaxMeanTilesD128;
  const int64_t items = work_items(p);
  return items >= int64_t{kPersistentMinWaves} * sm_count && items < (int64_t{1} << 31) &&
         kv_tiles_per_head(p) <= max_tiles * q_tiles(p);
}

}  // namespace sb::attention::wgmma_flash
