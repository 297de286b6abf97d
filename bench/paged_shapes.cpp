#include "paged_shapes.h"

#include <stdexcept>
#include <utility>

#include "harness/cli.h"

namespace sb::bench {

namespace {

PagedShape paged(int64_t batch, int64_t kv, int64_t page, LengthDist dist, bool fp8 = false) {
  return {{batch, 32, 8, 128, 1, kv, false}, page, dist, fp8};  // Llama-3-8B decode: 32 q heads, 8 kv heads, d128
}

// Llama-3-8B serving batches: 64 sequences of up to 16k keys and 256 of up to 4k (K + V of 4.3 GB when every
// sequence is full), each in vLLM's page sizes, under each length distribution; the same ragged batches with
// one page a sequence (page = kv_len: each sequence contiguous, at kv_len keys apart, as a cache without paging
// holds them); and one long-context batch. Then the FP8 cache at vLLM's default page size, 16, and at 64, full
// (eq: the contiguous cache's case) and uniform, against the 16-bit rows of the same shapes.
std::vector<PagedShape> make_paged_set() {
  std::vector<PagedShape> s;
  const std::pair<int64_t, int64_t> batches[] = {{64, 16384}, {256, 4096}};
  for (const auto& [batch, kv] : batches) {
    for (int64_t page : {16, 64, 256})
      for (LengthDist d : {LengthDist::eq, LengthDist::unif, LengthDist::zipf, LengthDist::onelong})
        s.push_back(paged(batch, kv, page, d));
    for (LengthDist d : {LengthDist::unif, LengthDist::zipf, LengthDist::onelong}) s.push_back(paged(batch, kv, kv, d));
  }
  s.push_back(paged(16, 131072, 64, LengthDist::onelong));
  for (const auto& [batch, kv] : batches)
    for (int64_t page : {16, 64})
      for (LengthDist d : {LengthDist::eq, LengthDist::unif}) s.push_back(paged(batch, kv, page, d, true));
  return s;
}

const NamedSets<PagedShape>& sets() {
  static const std::vector<PagedShape> kPaged = make_paged_set();
  static const NamedSets<PagedShape> s({{"paged", {&kPaged}}});
  return s;
}

PagedShape parse_one(const std::string& spec_item) {
  const std::string kFp8Suffix = "_fp8";
  const bool fp8 = spec_item.size() > kFp8Suffix.size() &&
                   spec_item.compare(spec_item.size() - kFp8Suffix.size(), kFp8Suffix.size(), kFp8Suffix) == 0;
  const std::string item = fp8 ? spec_item.substr(0, spec_item.size() - kFp8Suffix.size()) : spec_item;
  const auto dist_at = item.rfind('_');
  const auto page_at = dist_at == std::string::npos ? std::string::npos : item.rfind('_', dist_at - 1);
  if (page_at == std::string::npos || item.compare(page_at, 2, "_p") != 0)
    throw UsageError("--shapes: '" + spec_item + "' is not <decode shape>_p<page_size>_<eq|unif|zipf|onelong>[_fp8] " +
                     "(or a set: " + sets().names() + ")");
  PagedShape s{};
  s.fp8 = fp8;
  try {
    s.dist = parse_length_dist(item.substr(dist_at + 1));
  } catch (const std::invalid_argument& e) {
    throw UsageError("--shapes: " + std::string(e.what()) + " in '" + item + "'");
  }
  s.page_size = parse_int(item.substr(page_at + 2, dist_at - page_at - 2), 1, 65536, "page size in '" + item + "'");
  const std::vector<AttentionShape> dims = parse_attention_shapes(item.substr(0, page_at));
  if (dims.size() != 1) throw UsageError("--shapes: '" + item + "' names a set where a decode shape goes");
  s.dims = dims.front();
  if (s.dims.q_len > 8 || !s.dims.decode())
    throw UsageError("--shapes: '" + item + "' is not a decode shape (q_len <= 8 and kv_len > q_len)");
  return s;
}

}  // namespace

std::string PagedShape::name() const {
  return dims.name() + "_p" + std::to_string(page_size) + "_" + bench::name(dist) + (fp8 ? "_fp8" : "");
}

std::vector<int64_t> PagedShape::lengths() const { return sequence_lengths(dist, dims.batch, dims.kv_len, 1); }

std::vector<PagedShape> parse_paged_shapes(const std::string& spec) {
  return parse_shape_spec(spec, sets(), parse_one);
}

std::string paged_shapes_grammar() {
  return "                  Paged decode: <decode shape>_p<page_size>_<dist>[_fp8], the decode shape as\n"
         "                  above (kv_len: the longest sequence), dist the batch's lengths: eq (all kv_len),\n"
         "                  unif (uniform in 1..kv_len), zipf (kv_len / rank), onelong (one kv_len, the\n"
         "                  rest kv_len / 64); _fp8: K and V in an FP8 (e4m3) cache; the set: paged.\n"
         "                  Example: b64_hq32_hkv8_d128_q1_kv16384_p16_zipf\n";
}

}  // namespace sb::bench
