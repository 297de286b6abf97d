// wgmma_flash's launch plan: how many consumer warpgroups (64 query rows each) a block has. A pure function
// of the problem, and whether blocks are persistent, of the problem and the SM count (no CUDA calls), so the
// CPU tests check them on any machine; wgmma_flash.cu calls them.
#pragma once

#include <cstdint>

#include "attention/attention.h"

namespace sb::attention::wgmma_flash {

// Head dim 128: two warpgroups (128 query rows a block), each overlapping its softmax with its own P V
// (two P buffers: 232 registers a thread). Head dim 64: three warpgroups (192 rows) without that overlap
// (160 registers: no room for a second P buffer), except causal problems shorter than
// kThreeWarpgroupMinCausalLen query rows, which keep two.
// Why (results/h200/history/2026-12-01_session34_experiments/, c166, bf16 cold, against two warpgroups
// without overlap): three warpgroups at D 64 read 0.85-0.94x the time from s512 up unmasked and from s2048 up
// causal, but 1.04-1.07x at causal s512 and s1024, where a 192-row tile wastes more of the diagonal and of
// the last tile than a 128-row one. There two warpgroups with the overlap read 0.98-1.00x.
inline constexpr int64_t kThreeWarpgroupMinCausalLen = 2048;

inline int warpgroups(const Problem& p) {
  if (p.head_dim != 64) return 2;
  return p.causal && p.q_len < kThreeWarpgroupMinCausalLen ? 2 : 3;
}

// Work items: Q tiles of 64 x warpgroups(p) rows, times heads and batch (the default grid's blocks).
inline int64_t work_items(const Problem& p) {
  const int64_t rows = 64 * warpgroups(p);
  return (p.q_len + rows - 1) / rows * p.heads_q * p.batch;
}

// Persistent blocks (one an SM, each taking the next work item from a counter when its producer is free,
// the producer copying the next item's Q while the consumers finish the last) at head_dim 64 where two
// warpgroups run (causal, under kThreeWarpgroupMinCausalLen rows), once there are at least
// kPersistentMinWaves items an SM; else one block an item. Why (results/h200/history/
// 2026-12-01_session35_experiments/, c171, bf16 cold, two passes, against one block an item): 0.841 of the
// time at b32 h32 s512 causal, 0.908 at b16 h32 s1024 causal, 0.920 at b16 h16 s1024 causal, where a
// block's setup, first loads and O store weigh most. Elsewhere it lost or did not help: 0.98-1.03 from
// s2048 at D 64, 1.00-1.13 at D 128 (the same kernel with one item a block cost 1.02-1.15 there too), and
// with three warpgroups ptxas spills. Below two waves most blocks would take one item and pay the
// producer's Q copy for nothing (that kernel with one item a block: 1.08-1.09 at D 64); 2 is a guess at the
// crossover, not measured. Past 2^31 - 1 items the counter would overflow: one block an item.
inline constexpr int kPersistentMinWaves = 2;
inline bool persistent(const Problem& p, int sm_count) {
  if (p.head_dim != 64 || warpgroups(p) != 2 || sm_count <= 0) return false;
  const int64_t items = work_items(p);
  return items >= int64_t{kPersistentMinWaves} * sm_count && items < (int64_t{1} << 31);
}

}  // namespace sb::attention::wgmma_flash
