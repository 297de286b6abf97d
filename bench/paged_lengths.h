// The KV lengths of a decode batch as a serving engine sees it: the distributions paged and ragged decode
// cases are named by. Deterministic: the same (distribution, batch, kv, seed) gives the same lengths on
// every machine (a fixed 64-bit generator and integer arithmetic only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sb::bench {

enum class LengthDist {
  eq,       // every sequence kv long: the contiguous kernel's case, for paged against contiguous
  unif,     // uniform in [1, kv]: mean about kv / 2
  zipf,     // a long tail: the sequence of rank r (1..batch, shuffled) is kv / r long: mean about
            // kv * ln(batch) / batch, so a padded batch reads almost all padding
  onelong,  // one sequence kv long, the others kv / 64: one long context among short chats
};

const char* name(LengthDist d);
// "eq", "unif", "zipf" or "onelong"; throws std::invalid_argument listing them for another word.
LengthDist parse_length_dist(const std::string& word);
// batch lengths, each in [1, kv], the longest exactly kv. Throws std::invalid_argument for batch or kv < 1.
std::vector<int64_t> sequence_lengths(LengthDist d, int64_t batch, int64_t kv, uint64_t seed = 1);

}  // namespace sb::bench
