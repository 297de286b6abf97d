// Attention problem shapes: the named sets (from real models) and the --shapes grammar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sb::bench {

// One attention forward problem (layout and masking: kernels/attention/attention.h). heads_q is a
// multiple of heads_kv (GQA; MHA when equal). Causal masking with q_len != kv_len is bottom-right aligned.
struct AttentionShape {
  int64_t batch;
  int64_t heads_q;
  int64_t heads_kv;
  int64_t head_dim;
  int64_t q_len;
  int64_t kv_len;
  bool causal;
  // The workload is derived, never stored: decode (a few new tokens against a longer KV cache) when
  // q_len <= kMaxDecodeQLen and kv_len > q_len, else prefill.
  static constexpr int64_t kMaxDecodeQLen = 16;
  bool decode() const { return q_len <= kMaxDecodeQLen && kv_len > q_len; }
  std::string workload() const;  // "prefill" or "decode"
  // "b4_hq32_hkv8_d128_q4096_kv4096_causal" ("_causal" omitted when false): the shape field of a case name.
  std::string name() const;
  bool operator==(const AttentionShape& o) const {
    return batch == o.batch && heads_q == o.heads_q && heads_kv == o.heads_kv && head_dim == o.head_dim &&
           q_len == o.q_len && kv_len == o.kv_len && causal == o.causal;
  }
  bool operator!=(const AttentionShape& o) const { return !(*this == o); }
};

// --shapes=SPEC: a comma-separated list of items, each a named set or one shape written as name()
// writes it: b<batch>_hq<heads_q>_hkv<heads_kv>_d<head_dim>_q<q_len>_kv<kv_len>[_causal], every
// token present, in that order. batch in [1, 65536], heads in [1, 1024], head_dim in [1, 1024],
// q_len and kv_len in [1, 2^20]; heads_q a multiple of heads_kv.
// Duplicates are dropped, order kept. Throws UsageError naming the bad item and what is wrong.
std::vector<AttentionShape> parse_attention_shapes(const std::string& spec);
// The named sets: "default" (= prefill + decode), "prefill", "decode", "anchors", "smoke", "edge".
std::vector<AttentionShape> attention_shape_set(const std::string& name);
std::string attention_shapes_grammar();  // the paragraph for --help

}  // namespace sb::bench
