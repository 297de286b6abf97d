// wgmma_flash's launch plan: how many consumer warpgroups (64 query rows each) a block has. A pure function
// of the problem (no CUDA calls), so the CPU tests check it on any machine; wgmma_flash.cu calls it.
#pragma once

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

}  // namespace sb::attention::wgmma_flash
