// decode_splitk's plan (see decode_splitk.h): plain C++, no CUDA calls.
#include "attention/decode_splitk.h"

#include <algorithm>
#include <cmath>

namespace sb::attention::decode_splitk {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
constexpr std::size_t kAlign = 256;
std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }
}  // namespace

int num_splits_heuristic(int64_t blocks, int64_t tiles, int64_t min_tiles_per_split, int64_t slots) {
  if (blocks <= 0 || tiles <= 0 || slots <= 0) return 1;
  if (static_cast<double>(blocks) >= kNoSplitFill * static_cast<double>(slots)) return 1;
  const int64_t max_splits = std::min<int64_t>(kMaxHeuristicSplits, tiles / std::max<int64_t>(1, min_tiles_per_split));
  if (max_splits <= 1) return 1;
  // s is a candidate when s chunks of ceil(tiles / s) tiles are all non-empty.
  auto candidate = [&](int64_t s) { return ceil_div(tiles, ceil_div(tiles, s)) == s; };
  auto efficiency = [&](int64_t s) {
    const double waves = static_cast<double>(blocks * s) / static_cast<double>(slots);
    return waves / std::ceil(waves);
  };
  double best = 0;
  for (int64_t s = 1; s <= max_splits; ++s)
    if (candidate(s)) best = std::max(best, efficiency(s));
  for (int64_t s = 1; s <= max_splits; ++s)
    if (candidate(s) && efficiency(s) >= kWaveEfficiency * best) return static_cast<int>(s);
  return 1;
}

Plan make_plan(const Problem& p, int sm_count) {
  Plan plan;
  // Up to 8 rows a block at head_dim <= 128 (GQA there runs on tensor cores, whose MMA pads rows to 16);
  // head_dim 256 stops at kFmaMaxRows = 4 so the FMA kernel's cross-warp merge stays within 32 KB of
  // shared memory.
  const int max_rows = p.head_dim > 128 ? kFmaMaxRows : 8;
  const int64_t rows = p.heads_q / std::max<int64_t>(1, p.heads_kv) * p.q_len;
  while (plan.rows_per_block < rows && plan.rows_per_block < max_rows) plan.rows_per_block *= 2;
  plan.row_blocks = ceil_div(rows, plan.rows_per_block);
  // MHA with 1 or 2 rows (query tokens) a kv head: 2 adjacent kv heads a block (a key's two head pieces
  // lie within one warp up to head_dim 128).
  if (p.heads_q == p.heads_kv && rows <= 2 && p.heads_kv % 2 == 0 && p.head_dim <= 128) plan.heads_per_block = 2;
  // GQA row blocks at head_dim <= 128 run the tensor-core kernel: 64-key tiles, one slot an SM (see Plan).
  // (It scales the fp32 scores, not Q, so every dtype and softmax scale can take it.)
  plan.tensor_cores = plan.rows_per_block >= 2 && plan.heads_per_block == 1 && p.head_dim <= 128;
  if (plan.tensor_cores) {
    plan.blocks_per_sm = 1;
    plan.tile_keys = kTcTileKeys;
  } else {
    plan.blocks_per_sm = kFmaBlocksPerSm;
    const int lanes_per_key = static_cast<int>(p.head_dim) / kDimsPerLane * plan.heads_per_block;
    plan.tile_keys = kThreads / std::max(1, lanes_per_key) * keys_per_lane(plan.rows_per_block);
  }
  plan.tiles = ceil_div(p.kv_len, plan.tile_keys);
  const int64_t units = p.batch * (p.heads_kv / plan.heads_per_block) * plan.row_blocks;
  int64_t splits;
  if (p.num_splits > 0) {
    splits = std::min<int64_t>(p.num_splits, kMaxSplits);
  } else {
    int64_t min_tiles = std::max<int64_t>(1, ceil_div(kMinSplitKeys, plan.tile_keys));
    // A small tensor-core plan splits at most kMaxClusterSplits ways (the cluster merge).
    if (plan.tensor_cores && p.kv_bytes() <= kClusterMaxKvBytes &&
        units * kMaxClusterSplits <= sm_count / 2)
      min_tiles = std::max(min_tiles, ceil_div(plan.tiles, kMaxClusterSplits));
    splits = num_splits_heuristic(units, plan.tiles, min_tiles, static_cast<int64_t>(sm_count) * plan.blocks_per_sm);
  }
  const int64_t tiles_per_split = ceil_div(plan.tiles, splits);
  plan.chunk_keys = tiles_per_split * plan.tile_keys;
  if (p.num_splits <= 0) splits = ceil_div(plan.tiles, tiles_per_split);  // the heuristic leaves no chunk empty
  plan.num_splits = static_cast<int>(splits);
  plan.cluster_combine = plan.tensor_cores && plan.num_splits > 1 &&
                         plan.num_splits <= kMaxClusterSplits && p.kv_bytes() <= kClusterMaxKvBytes &&
                         units * plan.num_splits <= sm_count / 2;
  plan.paired_clusters = plan.tensor_cores && plan.num_splits == 1 && plan.row_blocks == 1 &&
                         p.heads_kv % kPairBlocks == 0 && 2 * units > sm_count &&
                         units <= sm_count / kPairBlocks * kPairBlocks;
  return plan;
}

std::size_t workspace_bytes(const Plan& plan, const Problem& p) {
  if (plan.num_splits <= 1 || plan.cluster_combine) return 0;
  const auto partials = static_cast<std::size_t>(p.batch * p.q_len * p.heads_q) * plan.num_splits;
  return align_up(partials * static_cast<std::size_t>(p.head_dim) * sizeof(float)) + align_up(partials * sizeof(float));
}

}  // namespace sb::attention::decode_splitk
