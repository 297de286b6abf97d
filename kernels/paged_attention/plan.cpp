#include "paged_attention/plan.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace sb::paged_attention {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

SplitPlan plan_splits(const int32_t* lens, int64_t batch, int64_t units_per_seq, int64_t tile_keys, int64_t slots,
                      int64_t min_chunk_keys, int64_t forced_splits) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("paged_attention::plan_splits: " + what); };
  if (batch < 1 || !lens) fail("no sequences");
  if (units_per_seq < 1 || tile_keys < 1 || slots < 1)
    fail("units_per_seq, tile_keys and slots must be >= 1, got " + std::to_string(units_per_seq) + ", " +
         std::to_string(tile_keys) + ", " + std::to_string(slots));
  int64_t longest = 0, total = 0;
  for (int64_t b = 0; b < batch; ++b) {
    if (lens[b] < 1) fail("lens[" + std::to_string(b) + "] must be >= 1, got " + std::to_string(lens[b]));
    longest = std::max<int64_t>(longest, lens[b]);
    total += lens[b];
  }
  const int64_t whole = ceil_div(longest, tile_keys) * tile_keys;
  auto plan_for = [&](int64_t chunk) {
    SplitPlan p;
    p.chunk_keys = chunk;
    p.max_splits = ceil_div(longest, chunk);
    for (int64_t b = 0; b < batch; ++b) p.blocks += units_per_seq * ceil_div(lens[b], chunk);
    return p;
  };
  if (forced_splits > 0) return plan_for(ceil_div(ceil_div(longest, forced_splits), tile_keys) * tile_keys);

  const double fair = static_cast<double>(units_per_seq) * static_cast<double>(total) / static_cast<double>(slots);
  auto makespan = [&](int64_t chunk) {
    int64_t full = 0;  // blocks that read a whole chunk
    for (int64_t b = 0; b < batch; ++b) full += units_per_seq * (lens[b] / chunk);
    const double waves = static_cast<double>(ceil_div(full, slots)) * static_cast<double>(chunk);
    return std::max({waves, fair, static_cast<double>(std::min(chunk, whole))});
  };
  // The candidates in ascending order, without a list: the tile's powers-of-two multiples from min_chunk_keys
  // below the longest sequence, then the longest sequence whole.
  auto for_each_candidate = [&](auto&& f) {
    for (int64_t chunk = tile_keys; chunk < whole; chunk *= 2)
      if (chunk >= min_chunk_keys) f(chunk);
    f(whole);
  };
  double best = makespan(whole);
  for_each_candidate([&](int64_t chunk) { best = std::min(best, makespan(chunk)); });
  int64_t chosen = whole;  // set below: the best candidate itself fits
  for_each_candidate([&](int64_t chunk) {  // ascending: the last that fits is the longest
    if (makespan(chunk) <= kMakespanSlack * best) chosen = chunk;
  });
  return plan_for(chosen);
}

}  // namespace sb::paged_attention
