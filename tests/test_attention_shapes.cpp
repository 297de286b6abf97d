// CPU tests of the attention --shapes grammar and named sets (the bench binaries' exit-2 paths are
// tested end to end by test_bench_cli.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "attention/attention.h"
#include "attention_shapes.h"
#include "expect.h"
#include "harness/cli.h"

namespace sb::bench {
namespace {

bool contains(const std::vector<AttentionShape>& v, const AttentionShape& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// ANCHORS.md, written out here independently of the implementation's table.
const std::vector<AttentionShape> kAnchorsMd = {
    {4, 32, 32, 128, 4096, 4096, true},    // prefill B, H, S, D = 4, 32, 4096, 128, causal
    {1, 32, 32, 128, 16384, 16384, true},  // 1, 32, 16384, 128, causal
    {16, 16, 16, 64, 1024, 1024, true},    // 16, 16, 1024, 64, causal
    {4, 32, 32, 128, 4096, 4096, false},   // 4, 32, 4096, 128, full
    {1, 32, 8, 128, 1, 4096, false},       // decode batch, KV = 1, 4096
    {1, 32, 8, 128, 1, 32768, false},      // 1, 32768
    {1, 32, 8, 128, 1, 131072, false},     // 1, 131072
    {16, 32, 8, 128, 1, 8192, false},      // 16, 8192
    {64, 32, 8, 128, 1, 4096, false},      // 64, 4096
    {64, 32, 8, 128, 1, 16384, false},     // 64, 16384
};

TEST(AttentionShapes, NameAndParsingRoundTrip) {
  const AttentionShape s{4, 32, 8, 128, 4096, 4096, true};
  EXPECT_EQ(s.name(), "b4_hq32_hkv8_d128_q4096_kv4096_causal");
  EXPECT_EQ((AttentionShape{1, 32, 8, 128, 1, 131072, false}).name(), "b1_hq32_hkv8_d128_q1_kv131072");
  const auto parsed = parse_attention_shapes("b4_hq32_hkv8_d128_q4096_kv4096_causal,b1_hq32_hkv8_d128_q1_kv131072");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0], s);
  EXPECT_EQ(parsed[1], (AttentionShape{1, 32, 8, 128, 1, 131072, false}));
  // Every shape of every set round-trips through its name.
  for (const char* set : {"default", "prefill", "decode", "anchors", "smoke"})
    for (const auto& a : attention_shape_set(set)) {
      const auto back = parse_attention_shapes(a.name());
      ASSERT_EQ(back.size(), 1u) << a.name();
      EXPECT_EQ(back[0], a) << a.name();
      EXPECT_EQ(back[0].name(), a.name());
    }
  // The limits themselves are accepted.
  const auto big = parse_attention_shapes("b65536_hq1024_hkv1_d1024_q1048576_kv1048576,b1_hq1_hkv1_d1_q1_kv1");
  ASSERT_EQ(big.size(), 2u);
  EXPECT_EQ(big[0], (AttentionShape{65536, 1024, 1, 1024, 1 << 20, 1 << 20, false}));
}

TEST(AttentionShapes, WorkloadIsDerived) {
  auto w = [](int64_t q, int64_t kv) { return AttentionShape{1, 8, 8, 64, q, kv, false}.workload(); };
  EXPECT_EQ(w(1, 4096), "decode");
  EXPECT_EQ(w(16, 17), "decode");  // speculative decoding: a few tokens against the cache
  EXPECT_EQ(w(17, 4096), "prefill");
  EXPECT_EQ(w(16, 16), "prefill");
  EXPECT_EQ(w(1, 1), "prefill");
  EXPECT_EQ(w(5, 3), "prefill");
  EXPECT_EQ(w(4096, 4096), "prefill");
  EXPECT_TRUE((AttentionShape{1, 8, 8, 64, 1, 2, false}).decode());
}

TEST(AttentionShapes, AnchorsAreExactlyAnchorsMdAndInDefault) {
  EXPECT_EQ(attention_shape_set("anchors"), kAnchorsMd);
  EXPECT_EQ(parse_attention_shapes("anchors"), kAnchorsMd);
  const auto def = attention_shape_set("default");
  const auto prefill = attention_shape_set("prefill");
  const auto decode = attention_shape_set("decode");
  for (const auto& a : kAnchorsMd) {
    EXPECT_TRUE(contains(def, a)) << a.name();
    EXPECT_TRUE(contains(a.decode() ? decode : prefill, a)) << a.name();
  }
  EXPECT_EQ(std::count_if(kAnchorsMd.begin(), kAnchorsMd.end(), [](auto& a) { return a.decode(); }), 6);
}

TEST(AttentionShapes, NamedSets) {
  const auto prefill = attention_shape_set("prefill");
  const auto decode = attention_shape_set("decode");
  auto def = prefill;
  def.insert(def.end(), decode.begin(), decode.end());
  EXPECT_EQ(attention_shape_set("default"), def);
  // No set repeats a shape, so parsing a set gives it back unchanged.
  for (const char* set : {"default", "prefill", "decode", "anchors", "smoke", "edge"})
    EXPECT_EQ(parse_attention_shapes(set), attention_shape_set(set)) << set;

  for (const auto& s : prefill) {
    EXPECT_EQ(s.workload(), "prefill") << s.name();
    EXPECT_EQ(s.q_len, s.kv_len) << s.name();
  }
  // FlashAttention's convention: 16k tokens, hidden 2048, seq 512..16k, causal and not.
  for (bool causal : {true, false})
    for (int64_t seq = 512; seq <= 16384; seq *= 2) {
      EXPECT_TRUE(contains(prefill, {16384 / seq, 32, 32, 64, seq, seq, causal})) << seq;
      EXPECT_TRUE(contains(prefill, {16384 / seq, 16, 16, 128, seq, seq, causal})) << seq;
    }
  // Llama-3-8B GQA at 2k and 8k.
  for (int64_t seq : {2048, 8192})
    EXPECT_EQ(std::count_if(prefill.begin(), prefill.end(),
                            [&](auto& s) { return s.heads_q == 32 && s.heads_kv == 8 && s.q_len == seq && s.causal; }),
              1);

  EXPECT_GE(decode.size(), 15u);
  EXPECT_LE(decode.size(), 25u);
  bool gqa = false, mha = false;
  int64_t min_b = 1 << 30, max_b = 0, min_kv = 1 << 30, max_kv = 0;
  for (const auto& s : decode) {
    EXPECT_EQ(s.workload(), "decode") << s.name();
    EXPECT_EQ(s.q_len, 1) << s.name();
    EXPECT_FALSE(s.causal) << s.name();
    EXPECT_TRUE(s.heads_q == 32 || (s.heads_q == 64 && s.heads_kv == 8)) << s.name();
    EXPECT_EQ(s.head_dim, 128);
    gqa |= s.heads_kv == 8;
    mha |= s.heads_kv == 32;
    min_b = std::min(min_b, s.batch), max_b = std::max(max_b, s.batch);
    min_kv = std::min(min_kv, s.kv_len), max_kv = std::max(max_kv, s.kv_len);
  }
  EXPECT_TRUE(gqa && mha);
  // bench_e2e's 70B decode layers' attention, so a layer's attention can be read against the kernel alone.
  EXPECT_TRUE(contains(decode, {1, 64, 8, 128, 1, 32768, false}));
  EXPECT_TRUE(contains(decode, {64, 64, 8, 128, 1, 4096, false}));
  EXPECT_EQ(min_b, 1);
  EXPECT_EQ(max_b, 256);
  EXPECT_EQ(min_kv, 1024);
  EXPECT_EQ(max_kv, 131072);

  const auto smoke = attention_shape_set("smoke");
  ASSERT_EQ(smoke.size(), 3u);
  EXPECT_EQ(smoke[0], (AttentionShape{1, 4, 2, 64, 17, 17, true}));
  EXPECT_EQ(smoke[1], (AttentionShape{2, 4, 1, 128, 1, 33, false}));
  EXPECT_EQ(smoke[1].workload(), "decode");
  EXPECT_TRUE(smoke[2].causal && smoke[2].q_len == 5 && smoke[2].kv_len == 3 && smoke[2].head_dim == 64);
  EXPECT_EQ(smoke[2].workload(), "prefill");

  test::expect_throw_naming<UsageError>([] { attention_shape_set("llama"); }, "unknown set 'llama'");
}

// The "edge" set holds the shape classes of the peers' attention tests (FlashAttention, FlashInfer, vLLM).
TEST(AttentionShapes, EdgeSetHoldsThePeersClasses) {
  const auto edge = attention_shape_set("edge");
  auto has = [&](const std::string& what, auto pred) {
    EXPECT_TRUE(std::any_of(edge.begin(), edge.end(), pred)) << what;
  };
  using S = const AttentionShape&;
  has("b1 h1 d64 q1 kv1", [](S s) { return s == AttentionShape{1, 1, 1, 64, 1, 1, false}; });
  for (bool causal : {true, false}) {
    const std::string c = causal ? " causal" : " unmasked";
    has("q_len < kv_len, prefill" + c, [&](S s) { return s.q_len > 16 && s.q_len < s.kv_len && s.causal == causal; });
    has("q_len > kv_len" + c, [&](S s) { return s.q_len > s.kv_len && s.causal == causal; });
    has("kv_len 1 under q_len > 1" + c, [&](S s) { return s.kv_len == 1 && s.q_len > 1 && s.causal == causal; });
  }
  has("causal rows that see no key in a whole tile", [](S s) { return s.causal && s.q_len - s.kv_len >= 64; });
  for (int64_t d : {64, 128}) {
    has("3 q heads on 1 kv head, d" + std::to_string(d), [&](S s) { return s.heads_q == 3 && s.heads_kv == 1 && s.head_dim == d; });
    has("6 q heads on 3 kv heads, d" + std::to_string(d), [&](S s) { return s.heads_q == 6 && s.heads_kv == 3 && s.head_dim == d; });
  }
  for (int64_t b : {3, 5, 7})
    has("decode at batch " + std::to_string(b), [&](S s) { return s.batch == b && s.q_len == 1 && s.decode(); });
  for (int64_t kv : {1, 17, 127, 1000, 4095, 8193})
    has("q_len 1 against kv_len " + std::to_string(kv), [&](S s) { return s.q_len == 1 && s.kv_len == kv && s.batch > 1; });
  has("speculative tokens, causal", [](S s) { return s.decode() && s.q_len > 1 && s.causal; });
  has("batch 1 against KV 262144", [](S s) { return s.batch == 1 && s.kv_len >= 262144 && s.decode(); });
}

TEST(AttentionShapes, DuplicatesDroppedOrderKept) {
  const auto s = parse_attention_shapes("smoke,b1_hq4_hkv2_d64_q17_kv17_causal,b1_hq4_hkv2_d64_q17_kv17,smoke");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], attention_shape_set("smoke")[0]);
  EXPECT_EQ(s[3], (AttentionShape{1, 4, 2, 64, 17, 17, false}));
  EXPECT_EQ(parse_attention_shapes("anchors,default").size(), attention_shape_set("default").size());
  const auto a = parse_attention_shapes("decode,anchors");
  EXPECT_EQ(a.front(), attention_shape_set("decode").front());
  EXPECT_EQ(a[attention_shape_set("decode").size()], kAnchorsMd[0]);  // prefill anchors follow
}

TEST(AttentionShapes, MalformedValuesAreUsageErrors) {
  test::expect_each_throws_naming<UsageError>("--shapes", parse_attention_shapes, {
      {"", "empty"},
      {",,", "empty"},
      // Neither a set nor a shape.
      {"llama", "'llama' is neither a shape"},
      {"4096", "'4096' is neither a shape"},
      {"Default", "neither a shape"},
      // Unknown, missing, repeated, out-of-order and empty tokens.
      {"b1_hq4_hkv2_d64_q8_kv8_causl", "unknown token 'causl' in 'b1_hq4_hkv2_d64_q8_kv8_causl'"},
      {"b1_h4_hkv2_d64_q8_kv8", "unknown token 'h4'"},
      {"b1_hq4_hkv2_d64_q8_kv8_noncausal", "unknown token 'noncausal'"},
      {"b1_hq4_hkv2_d64_q8_kv8_causal1", "unknown token 'causal1'"},
      {"b1_hq4_hkv2_d64_q8_kv8_causal1", "causal takes no value"},
      {"b1_hq4_hkv2_d64_q8", "missing token kv<kv_len> in 'b1_hq4_hkv2_d64_q8'"},
      {"b1_hq4_d64_q8_kv8", "missing token hkv<heads_kv>"},
      {"hq4_hkv2_d64_q8_kv8", "missing token b<batch>"},
      {"b1", "missing token hq<heads_q> in 'b1'"},
      {"b1_b2_hq4_hkv2_d64_q8_kv8", "token 'b' repeated"},
      {"b1_hq4_hkv2_d64_q8_kv8_causal_causal", "token 'causal' repeated"},
      {"hq4_b1_hkv2_d64_q8_kv8", "token 'b1' out of order"},
      {"b1_hq4_hkv2_d64_q8_causal_kv8", "out of order"},
      {"b1__hq4_hkv2_d64_q8_kv8", "empty token"},
      {"b1_hq4_hkv2_d64_q8_kv8_", "empty token"},
      {"b1_hq4_hkv2_d64_q8_kv8 ", "is not a positive integer"},
      // Values: not a positive integer.
      {"b_hq4_hkv2_d64_q8_kv8", "batch (token 'b' in 'b_hq4_hkv2_d64_q8_kv8'): '' is not a positive integer"},
      {"b1_hq4_hkv2_d-64_q8_kv8", "head_dim (token 'd-64'"},
      {"b1_hq4_hkv2_d-64_q8_kv8", "is not a positive integer"},
      {"b1_hq4_hkv2_d64_q8.5_kv8", "q_len (token 'q8.5'"},
      {"b1_hq4_hkv2_d64_q8_kv8k", "kv_len (token 'kv8k'"},
      {"b1_hq+4_hkv2_d64_q8_kv8", "heads_q (token 'hq+4'"},
      {"b99999999999999999999_hq4_hkv2_d64_q8_kv8", "is not a positive integer"},
      // Values: out of range.
      {"b0_hq4_hkv2_d64_q8_kv8", "batch (token 'b0'"},
      {"b0_hq4_hkv2_d64_q8_kv8", "out of range [1, 65536]"},
      {"b65537_hq4_hkv2_d64_q8_kv8", "out of range [1, 65536]"},
      {"b1_hq1025_hkv1_d64_q8_kv8", "heads_q (token 'hq1025' in 'b1_hq1025_hkv1_d64_q8_kv8'): 1025 is out of range [1, 1024]"},
      {"b1_hq4_hkv0_d64_q8_kv8", "heads_kv (token 'hkv0'"},
      {"b1_hq4_hkv2_d2048_q8_kv8", "head_dim (token 'd2048'"},
      {"b1_hq4_hkv2_d64_q1048577_kv8",
       "q_len (token 'q1048577' in 'b1_hq4_hkv2_d64_q1048577_kv8'): 1048577 is out of range [1, 1048576]"},
      {"b1_hq4_hkv2_d64_q8_kv0", "kv_len (token 'kv0'"},
      // GQA: heads_q a multiple of heads_kv.
      {"b1_hq32_hkv5_d128_q1_kv4096", "heads_q 32 is not a multiple of heads_kv 5 in 'b1_hq32_hkv5_d128_q1_kv4096'"},
      {"b1_hq4_hkv8_d128_q1_kv4096", "heads_q 4 is not a multiple of heads_kv 8"},
      // The bad item is named even after good ones.
      {"anchors,b1_hq4_hkv2_d64_q8,smoke", "in 'b1_hq4_hkv2_d64_q8'"}
  });
}

TEST(AttentionShapes, GrammarDocumentsTheForm) {
  const std::string g = attention_shapes_grammar();
  for (const char* s : {"b<batch>_hq<heads_q>_hkv<heads_kv>_d<head_dim>_q<q_len>", "_kv<kv_len>[_causal]",
                        "q_len <= 16", "decode", "prefill", "anchors", "smoke", "default", "edge"})
    EXPECT_NE(g.find(s), std::string::npos) << s;
  // Same layout as the other ops' paragraphs: every line indented to the help column, under 100 columns.
  std::size_t start = 0;
  while (start < g.size()) {
    const std::size_t nl = g.find('\n', start);
    ASSERT_NE(nl, std::string::npos);
    const std::string line = g.substr(start, nl - start);
    ASSERT_GT(line.size(), 18u) << line;
    EXPECT_EQ(line.substr(0, 18), std::string(18, ' ')) << line;
    EXPECT_NE(line[18], ' ') << line;
    EXPECT_LE(line.size(), 100u) << line;
    start = nl + 1;
  }
}

// A shape's workload is the kernel library's (attention::Problem::decode, which best_variant picks by): one
// rule, whatever the set.
TEST(AttentionShapes, WorkloadIsTheProblemsWorkload) {
  for (const char* set : {"default", "anchors", "smoke", "edge"})
    for (const AttentionShape& a : attention_shape_set(set)) {
      attention::Problem p;
      p.q_len = a.q_len;
      p.kv_len = a.kv_len;
      EXPECT_EQ(a.decode(), p.decode()) << a.name();
    }
  EXPECT_EQ(AttentionShape::kMaxDecodeQLen, attention::Problem::kMaxDecodeQLen);
}

}  // namespace
}  // namespace sb::bench
