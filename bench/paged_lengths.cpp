#include "paged_lengths.h"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace sb::bench {

namespace {
// A shuffle with the generator's raw output (std::shuffle's use of a distribution is the library's own, so
// two standard libraries could order differently).
void shuffle(std::vector<int64_t>& v, std::mt19937_64& gen) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[gen() % i]);
}
}  // namespace

const char* name(LengthDist d) {
  switch (d) {
    case LengthDist::eq: return "eq";
    case LengthDist::unif: return "unif";
    case LengthDist::zipf: return "zipf";
    case LengthDist::onelong: return "onelong";
  }
  return "?";
}

LengthDist parse_length_dist(const std::string& word) {
  for (LengthDist d : {LengthDist::eq, LengthDist::unif, LengthDist::zipf, LengthDist::onelong})
    if (word == name(d)) return d;
  throw std::invalid_argument("length distribution '" + word + "' is none of eq, unif, zipf, onelong");
}

std::vector<int64_t> sequence_lengths(LengthDist d, int64_t batch, int64_t kv, uint64_t seed) {
  if (batch < 1 || kv < 1)
    throw std::invalid_argument("sequence_lengths: batch and kv must be >= 1, got " + std::to_string(batch) + ", " +
                                std::to_string(kv));
  std::mt19937_64 gen(seed);
  std::vector<int64_t> lens(static_cast<std::size_t>(batch), kv);
  switch (d) {
    case LengthDist::eq: return lens;
    case LengthDist::unif:
      for (int64_t& len : lens) len = 1 + static_cast<int64_t>(gen() % static_cast<uint64_t>(kv));
      break;
    case LengthDist::zipf:
      for (int64_t r = 0; r < batch; ++r) lens[r] = std::max<int64_t>(1, kv / (r + 1));
      break;
    case LengthDist::onelong:
      for (int64_t r = 1; r < batch; ++r) lens[r] = std::max<int64_t>(1, kv / 64);
      break;
  }
  lens[0] = kv;  // the longest is kv whatever was drawn, so the padded baseline's length is the shape's
  shuffle(lens, gen);
  return lens;
}

}  // namespace sb::bench
