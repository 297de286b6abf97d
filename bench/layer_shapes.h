// Decoder-layer shapes for bench_e2e: the named sets (from real models) and the --shapes grammar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/dtype.h"

namespace sb::bench {

// One pre-norm decoder layer of a Llama-style model (Llama 3: RMSNorm, attention with RoPE and GQA,
// RMSNorm, SwiGLU MLP, two residual adds) applied to batch x q_len new tokens whose keys and values join
// a KV cache of kv_len positions (the last q_len of them the new tokens').
//   decode:  q_len 1, kv_len > 1: one new token per sequence against the cache;
//   prefill: q_len == kv_len: a prompt with causal attention (no cache before it).
struct LayerShape {
  int64_t hidden;
  int64_t heads_q;
  int64_t heads_kv;
  int64_t head_dim;
  int64_t ffn;  // the MLP's intermediate size
  int64_t batch;
  int64_t q_len;
  int64_t kv_len;

  bool decode() const { return q_len == 1 && kv_len > 1; }
  std::string workload() const { return decode() ? "decode" : "prefill"; }
  // "h4096_hq32_hkv8_d128_f14336_b1_q1_kv4096": the shape field of a case name.
  std::string name() const;

  // Elements of the layer's weights: the q, k, v and o projections, the MLP's gate, up and down
  // projections, and the two RMSNorm weights.
  int64_t weight_elements() const;
  // The least traffic, in bytes of `dtype`: every weight read once, the layer's input read and its output
  // written once, and the KV cache's K and V once (the cached positions read, the new ones written).
  std::size_t bytes(DType dtype) const;
  // 2 FLOPs a multiply-add: the projections (projection_flops: 2 x tokens x their weights) and attention
  // (4 x head_dim per unmasked query-key pair per q head, causal at prefill). RMSNorm, RoPE, SiLU and the
  // adds are not counted.
  double flops() const;
  double projection_flops() const;
  // What the layer moves without its norms and attention (bench_e2e's ref_rest_of_layer): bytes() less
  // the cached positions' K and V, which only the attention reads.
  std::size_t rest_bytes(DType dtype) const;
  // Query-key pairs a q head attends, per sequence: kv_len at decode, q_len (q_len + 1) / 2 at prefill.
  int64_t unmasked_pairs() const;

  bool operator==(const LayerShape& o) const {
    return hidden == o.hidden && heads_q == o.heads_q && heads_kv == o.heads_kv && head_dim == o.head_dim &&
           ffn == o.ffn && batch == o.batch && q_len == o.q_len && kv_len == o.kv_len;
  }
  bool operator!=(const LayerShape& o) const { return !(*this == o); }
};

// --shapes=SPEC for bench_e2e: a comma-separated list of named sets and shapes, each shape written as
// name() writes it, every token, in that order: hidden, heads and head_dim in [1, 65536] ([1, 1024] for
// heads and head_dim), ffn in [1, 2^20], batch in [1, 4096], q_len and kv_len in [1, 2^20]; heads_q a
// multiple of heads_kv; q_len 1 (decode) or equal to kv_len (prefill). Throws UsageError naming the bad
// item and what is wrong.
std::vector<LayerShape> parse_layer_shapes(const std::string& spec);
// The named sets: "decode", "prefill", "default" (both), "smoke", "compiled" (3 of default's: bench_torch's).
std::vector<LayerShape> layer_shape_set(const std::string& name);
std::string layer_shapes_grammar();  // the paragraph for --help

}  // namespace sb::bench
