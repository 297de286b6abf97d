// CPU tests of bench_torch's --shapes (bench/pybench_shapes.h): one SPEC for the RMSNorm-family, the attention and
// the paged attention cases, each item read by every grammar that reads it, and the JSON the Python driver reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "expect.h"
#include "harness/cli.h"
#include "pybench_shapes.h"

namespace sb::bench {
namespace {

TEST(PybenchShapes, EachItemGoesToTheOpsWhoseGrammarReadsIt) {
  const PyShapes s = parse_pybench_shapes("4096x8192,b1_hq32_hkv8_d128_q1_kv4096,t1_h4096");
  ASSERT_EQ(s.rmsnorm.size(), 2u);
  EXPECT_EQ(s.rmsnorm[0].name(), "t4096_h8192");
  EXPECT_EQ(s.rmsnorm[1].name(), "t1_h4096");
  ASSERT_EQ(s.attention.size(), 1u);
  EXPECT_EQ(s.attention[0].name(), "b1_hq32_hkv8_d128_q1_kv4096");
}

TEST(PybenchShapes, SetsBothOpsHaveGoToBothAsTheirBinariesReadThem) {
  for (const char* set : {"default", "anchors", "smoke", "edge"}) {
    const PyShapes s = parse_pybench_shapes(set);
    EXPECT_EQ(s.rmsnorm, parse_rmsnorm_shapes(set)) << set;
    EXPECT_EQ(s.attention, parse_attention_shapes(set)) << set;
  }
  const PyShapes prefill = parse_pybench_shapes("prefill");  // attention's only
  EXPECT_TRUE(prefill.rmsnorm.empty());
  EXPECT_EQ(prefill.attention, parse_attention_shapes("prefill"));
}

TEST(PybenchShapes, DuplicatesAreDroppedInOrder) {
  const PyShapes s = parse_pybench_shapes("smoke,3x7,smoke,8x5120");
  auto expected = parse_rmsnorm_shapes("smoke");
  expected.push_back({8, 5120});
  EXPECT_EQ(s.rmsnorm, expected);
  EXPECT_EQ(s.attention, parse_attention_shapes("smoke"));
}

TEST(PybenchShapes, LayerShapesAndSetsGoToTheLayerList) {
  const PyShapes s = parse_pybench_shapes("smoke,h256_hq4_hkv2_d64_f512_b3_q1_kv40,train");
  auto expected = parse_layer_shapes("smoke");
  expected.push_back(parse_layer_shapes("h256_hq4_hkv2_d64_f512_b3_q1_kv40")[0]);
  EXPECT_EQ(s.layer, expected);
  EXPECT_EQ(s.attention, parse_attention_shapes("smoke"));
  EXPECT_EQ(parse_pybench_shapes("default").layer, parse_layer_shapes("compiled"));  // 3 of default's 12
  EXPECT_EQ(parse_layer_shapes("compiled").size(), 3u);
  EXPECT_EQ(parse_pybench_shapes("decode").layer, parse_layer_shapes("decode"));
  EXPECT_TRUE(parse_pybench_shapes("anchors").layer.empty());
}

TEST(PybenchShapes, PagedShapesGoToThePagedList) {
  const PyShapes s = parse_pybench_shapes("paged,b1_hq32_hkv8_d128_q1_kv4096,b4_hq32_hkv8_d128_q1_kv4096_p16_zipf");
  auto expected = parse_paged_shapes("paged");
  const auto one = parse_paged_shapes("b4_hq32_hkv8_d128_q1_kv4096_p16_zipf");
  if (std::find(expected.begin(), expected.end(), one[0]) == expected.end()) expected.push_back(one[0]);
  EXPECT_EQ(s.paged, expected);
  ASSERT_EQ(s.attention.size(), 1u);
  EXPECT_TRUE(s.rmsnorm.empty());
  EXPECT_TRUE(parse_pybench_shapes("default").paged.empty());
}

TEST(PybenchShapes, AnItemNoGrammarReadsIsAUsageErrorWithEveryReason) {
  test::expect_throw_naming<UsageError>([] { parse_pybench_shapes("anchors,4096"); }, "'4096' is read by no grammar");
  test::expect_throw_naming<UsageError>([] { parse_pybench_shapes("4096"); }, "RMSNorm: '4096' is neither a shape");
  test::expect_throw_naming<UsageError>([] { parse_pybench_shapes("b1_hq3_hkv2_d64_q1_kv8"); },
                                        "not a multiple of heads_kv");
  test::expect_throw_naming<UsageError>([] { parse_pybench_shapes("b4_hq32_hkv8_d128_q1_kv4096_p16_normal"); },
                                        "Paged attention: ");
  test::expect_throw_naming<UsageError>([] { parse_pybench_shapes(""); }, "--shapes");
}

TEST(PybenchShapes, JsonNamesEachShapeAsItsCasesDo) {
  const std::string json = pybench_shapes_json(parse_pybench_shapes("3x7,b2_hq4_hkv1_d128_q1_kv33"));
  EXPECT_EQ(json,
            "{\"rmsnorm\": [{\"name\": \"t3_h7\", \"rows\": 3, \"hidden\": 7}], \"attention\": [{\"name\": "
            "\"b2_hq4_hkv1_d128_q1_kv33\", \"workload\": \"decode\", \"batch\": 2, \"heads_q\": 4, \"heads_kv\": 1, "
            "\"head_dim\": 128, \"q_len\": 1, \"kv_len\": 33, \"causal\": false}], \"paged\": [], \"layer\": []}");
  EXPECT_EQ(pybench_shapes_json(PyShapes{}), "{\"rmsnorm\": [], \"attention\": [], \"paged\": [], \"layer\": []}");
  const PyShapes paged = parse_pybench_shapes("b2_hq4_hkv1_d128_q1_kv33_p16_eq");
  EXPECT_EQ(pybench_shapes_json(paged),
            "{\"rmsnorm\": [], \"attention\": [], \"paged\": [{\"name\": \"b2_hq4_hkv1_d128_q1_kv33_p16_eq\", "
            "\"workload\": \"decode\", \"batch\": 2, \"heads_q\": 4, \"heads_kv\": 1, \"head_dim\": 128, "
            "\"q_len\": 1, \"kv_len\": 33, \"causal\": false, \"page_size\": 16, \"lengths\": [33, 33]}], \"layer\": []}");
  EXPECT_EQ(pybench_shapes_json(parse_pybench_shapes("h256_hq4_hkv2_d64_f512_b2_q1_kv33")),
            "{\"rmsnorm\": [], \"attention\": [], \"paged\": [], \"layer\": [{\"name\": "
            "\"h256_hq4_hkv2_d64_f512_b2_q1_kv33\", \"workload\": \"decode\", \"hidden\": 256, \"heads_q\": 4, "
            "\"heads_kv\": 2, \"head_dim\": 64, \"ffn\": 512, \"batch\": 2, \"q_len\": 1, \"kv_len\": 33}]}");
}

}  // namespace
}  // namespace sb::bench
