// Paged decode shapes: an attention decode shape (kv_len: the longest sequence), the page size and the
// distribution of the batch's lengths (paged_lengths.h), and the --shapes grammar for them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attention_shapes.h"
#include "paged_attention/paged_attention.h"
#include "paged_lengths.h"

namespace sb::bench {

struct PagedShape {
  AttentionShape dims;  // a decode shape: q_len <= 8, kv_len the longest sequence of the batch
  int64_t page_size;
  LengthDist dist;
  bool fp8 = false;     // K and V in an FP8 (e4m3) cache (paged_attention::KvCache::fp8_e4m3)
  // "<dims.name()>_p<page_size>_<dist>[_fp8]", e.g. b64_hq32_hkv8_d128_q1_kv16384_p16_zipf: a case's shape field.
  std::string name() const;
  // The batch's lengths: sequence_lengths with seed 1, so every binary and run draws the same (an FP8 shape's
  // are its 16-bit twin's).
  std::vector<int64_t> lengths() const;
  paged_attention::KvCache kv_cache() const {
    return fp8 ? paged_attention::KvCache::fp8_e4m3 : paged_attention::KvCache::dtype;
  }
  bool operator==(const PagedShape& o) const {
    return dims == o.dims && page_size == o.page_size && dist == o.dist && fp8 == o.fp8;
  }
};

// The bytes and FLOPs a paged case is counted in, by bench_attention and bench_torch alike: the K and V of the
// batch's own keys as the cache stores them, and their FLOPs (paged_attention::Problem's kv_bytes and flops),
// not the pages' unused rows nor a padded batch's.
inline std::pair<double, double> useful_work(const PagedShape& shape, DType dtype) {
  const std::vector<int64_t> lens = shape.lengths();
  const std::vector<int32_t> lens32(lens.begin(), lens.end());
  paged_attention::Problem p;
  p.batch = shape.dims.batch;
  p.heads_q = shape.dims.heads_q;
  p.heads_kv = shape.dims.heads_kv;
  p.head_dim = shape.dims.head_dim;
  p.q_len = shape.dims.q_len;
  p.causal = shape.dims.causal;
  p.dtype = dtype;
  p.kv_cache = shape.kv_cache();
  p.seq_lens_host = lens32.data();
  return {static_cast<double>(p.kv_bytes()), p.flops()};
}

// --shapes=SPEC for paged decode: named sets ("paged") and shapes written as name() writes them: an attention
// decode shape (attention_shapes.h's grammar, q_len <= 8), then _p<page_size> (1 to 65536), then _<dist>
// (eq, unif, zipf, onelong), then _fp8 for an FP8 cache. Throws UsageError naming the bad item and what is
// wrong.
std::vector<PagedShape> parse_paged_shapes(const std::string& spec);
std::string paged_shapes_grammar();  // the paragraph for --help

}  // namespace sb::bench
