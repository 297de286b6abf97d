// CPU tests of bench_e2e's layer shapes: the --shapes grammar, the named sets and the byte and FLOP
// formulas, against figures worked out by hand in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "expect.h"
#include "harness/cli.h"
#include "layer_shapes.h"

namespace sb::bench {
namespace {

// Llama-3-8B (Hugging Face config.json: hidden 4096, 32 / 8 heads, head_dim 128, intermediate 14336).
LayerShape llama8b(int64_t batch, int64_t q_len, int64_t kv_len) { return {4096, 32, 8, 128, 14336, batch, q_len, kv_len}; }

TEST(LayerShapes, NameAndParsingRoundTrip) {
  const LayerShape s = llama8b(1, 1, 4096);
  EXPECT_EQ(s.name(), "h4096_hq32_hkv8_d128_f14336_b1_q1_kv4096");
  const auto parsed = parse_layer_shapes("h4096_hq32_hkv8_d128_f14336_b1_q1_kv4096,h8_hq2_hkv1_d4_f16_b3_q5_kv5");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0], s);
  EXPECT_EQ(parsed[1], (LayerShape{8, 2, 1, 4, 16, 3, 5, 5}));
  for (const char* set : {"default", "decode", "prefill", "smoke"})
    for (const LayerShape& l : layer_shape_set(set)) {
      const auto back = parse_layer_shapes(l.name());
      ASSERT_EQ(back.size(), 1u) << l.name();
      EXPECT_EQ(back[0], l) << l.name();
    }
}

TEST(LayerShapes, WorkloadIsDecodeOrPrefill) {
  EXPECT_EQ(llama8b(1, 1, 4096).workload(), "decode");
  EXPECT_EQ(llama8b(64, 1, 2).workload(), "decode");
  EXPECT_EQ(llama8b(1, 4096, 4096).workload(), "prefill");
  EXPECT_EQ(llama8b(1, 1, 1).workload(), "prefill");  // a one-token prompt
}

TEST(LayerShapes, NamedSets) {
  auto def = layer_shape_set("decode");
  const auto prefill = layer_shape_set("prefill");
  def.insert(def.end(), prefill.begin(), prefill.end());
  EXPECT_EQ(layer_shape_set("default"), def);
  for (const char* set : {"default", "decode", "prefill", "smoke", "compiled"})
    EXPECT_EQ(parse_layer_shapes(set), layer_shape_set(set)) << set;
  for (const auto& s : layer_shape_set("compiled"))  // bench_torch's: a subset of default's
    EXPECT_NE(std::find(def.begin(), def.end(), s), def.end()) << s.name();
  // Llama-3-8B at every ANCHORS.md decode shape (batch, KV).
  const auto decode = layer_shape_set("decode");
  for (const auto& [b, kv] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 4096}, {1, 32768}, {1, 131072}, {16, 8192}, {64, 4096}, {64, 16384}})
    EXPECT_NE(std::find(decode.begin(), decode.end(), llama8b(b, 1, kv)), decode.end()) << b << " " << kv;
  for (const auto& s : decode) EXPECT_EQ(s.workload(), "decode") << s.name();
  for (const auto& s : prefill) EXPECT_EQ(s.workload(), "prefill") << s.name();
  // Llama-3-70B is there too.
  EXPECT_TRUE(std::any_of(def.begin(), def.end(), [](const LayerShape& s) {
    return s.hidden == 8192 && s.heads_q == 64 && s.heads_kv == 8 && s.ffn == 28672;
  }));
  test::expect_throw_naming<UsageError>([] { layer_shape_set("llama"); }, "unknown set 'llama'");
}

TEST(LayerShapes, BytesAndFlopsByHand) {
  // Weights: q and o 4096 x 4096 each, k and v 4096 x 1024 each (8 kv heads x 128), gate, up and down
  // 4096 x 14336 each, two norms of 4096: 33,554,432 + 8,388,608 + 176,160,768 + 8,192 = 218,112,000
  // (Llama-3-8B's 8.03 B parameters less its two 525 M-element embeddings, over 32 layers: 218 M).
  const LayerShape d = llama8b(1, 1, 4096);
  EXPECT_EQ(d.weight_elements(), 218112000);
  // bf16 decode at KV 4096: weights + input and output (2 x 4096) + K and V (2 x 4096 x 8 x 128):
  // 218,112,000 + 8,192 + 8,388,608 = 226,508,800 elements, 453,017,600 bytes.
  EXPECT_EQ(d.bytes(DType::bf16), 453017600u);
  EXPECT_EQ(d.bytes(DType::f32), 906035200u);
  // FLOPs: 2 x 1 token x 218,103,808 projection weights = 436,207,616; attention 4 x 128 x 32 heads x
  // 4096 keys = 67,108,864; 503,316,480 in all.
  EXPECT_DOUBLE_EQ(d.projection_flops(), 436207616.0);
  EXPECT_EQ(d.unmasked_pairs(), 4096);
  EXPECT_DOUBLE_EQ(d.flops(), 503316480.0);
  // Prefill of 4096 tokens, causal: 4096 x 4097 / 2 = 8,390,656 pairs a head; 2 x 4096 x 218,103,808 =
  // 1,786,706,395,136 projection FLOPs, 4 x 128 x 32 x 8,390,656 = 137,472,507,904 of attention.
  const LayerShape p = llama8b(1, 4096, 4096);
  EXPECT_EQ(p.unmasked_pairs(), 8390656);
  EXPECT_DOUBLE_EQ(p.flops(), 1786706395136.0 + 137472507904.0);
  // Without its norms and attention the layer writes the new token's K and V (2 x 8 x 128) and reads no
  // cached ones: 218,112,000 + 8,192 + 2,048 = 218,122,240 elements, 436,244,480 bytes; at prefill nothing
  // is cached, so all of bytes().
  EXPECT_EQ(d.rest_bytes(DType::bf16), 436244480u);
  EXPECT_EQ(p.rest_bytes(DType::bf16), p.bytes(DType::bf16));
  // Batch scales the tokens and the cache, not the weights: b64 decode adds 63 x (8,192 + 8,388,608).
  EXPECT_EQ(llama8b(64, 1, 4096).bytes(DType::bf16), 2u * (218112000u + 64u * (8192u + 8388608u)));
}

TEST(LayerShapes, MalformedValuesAreUsageErrors) {
  test::expect_each_throws_naming<UsageError>("--shapes", parse_layer_shapes, {
      {"", "empty"},
      {"llama", "'llama' is neither a shape"},
      {"llama3_8b", "unknown token 'llama3' in 'llama3_8b'"},
      {"h4096_hq32_hkv8_d128_b1_q1_kv4096", "missing token f<ffn>"},
      {"h4096_hq32_hkv8_d128_f14336_b1_q1_kv4096_causal", "unknown token 'causal'"},
      {"hq32_h4096_hkv8_d128_f14336_b1_q1_kv4096", "out of order"},
      {"h4096_hq32_hkv8_d128_f14336_b0_q1_kv4096", "batch (token 'b0'"},
      {"h4096_hq32_hkv8_d128_f14336_b4097_q1_kv4096", "out of range [1, 4096]"},
      {"h4096_hq30_hkv8_d128_f14336_b1_q1_kv4096", "heads_q 30 is not a multiple of heads_kv 8"},
      {"h4096_hq32_hkv8_d128_f14336_b1_q4_kv4096", "q_len 4 with kv_len 4096 in 'h4096_hq32_hkv8_d128_f14336_b1_q4_kv4096'"},
      {"h4096_hq32_hkv8_d128_f14336_b1_q8_kv4", "prefill (q_len == kv_len)"}
  });
}

}  // namespace
}  // namespace sb::bench
