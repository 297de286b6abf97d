// CPU tests of the training step's configs and task (bench/train_config.h): parameter and FLOP counts worked
// out by hand in the comments, the names bad input must be refused with, the --shapes items, and the synthetic
// task's determinism and rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <utility>
#include <string>
#include <vector>

#include "expect.h"
#include "harness/cli.h"
#include "layer_shapes.h"
#include "train_config.h"

namespace sb::bench {
namespace {

std::vector<std::string> names(const std::vector<TrainConfig>& configs) {
  std::vector<std::string> out;
  for (const TrainConfig& c : configs) out.push_back(c.name);
  return out;
}

TEST(TrainConfig, ParameterCountsByHand) {
  // small: embedding and LM head 1024 x 256 each = 524,288; a layer: q and o 256 x 256 (65,536 each), k and v
  // 256 x 128 (32,768 each), gate, up and down 256 x 768 (196,608 each), two norms of 256: 786,944; two layers
  // 1,573,888; the final norm 256. 2,098,432 in all.
  const TrainConfig& small = train_config("small");
  EXPECT_EQ(small.parameters(), 2098432);
  EXPECT_EQ(small.matmul_parameters(), 2098432 - 262144 - 2 * 512 - 256);
  // 1b: embedding and LM head 32000 x 2048 each = 131,072,000; a layer: q and o 2048 x 2048 (4,194,304 each),
  // k and v 2048 x 1024 (2,097,152 each), gate, up and down 2048 x 8192 (16,777,216 each), two norms of 2048:
  // 62,918,656; 16 layers 1,006,698,496; the final norm 2048. 1,137,772,544 in all: the "1b" of its name.
  const TrainConfig& b1 = train_config("1b");
  EXPECT_EQ(b1.parameters(), 1137772544);
  EXPECT_GE(b1.parameters(), 900000000);
  EXPECT_LE(b1.parameters(), 1300000000);
  EXPECT_EQ(b1.tokens_per_step(), 8 * 2048);
}

TEST(TrainConfig, FlopsPerStepByHand) {
  // small: 6 x 1,835,008 matmul parameters (two layers of 786,432, the LM head's 262,144) x 2048 tokens, plus
  // attention: 3 x 4 x 64 x 4 heads x 2 layers x (256 x 257 / 2 = 32,896 pairs) x 8 sequences.
  const TrainConfig& s = train_config("small");
  const int64_t matmul = 2 * (2 * 65536 + 2 * 32768 + 3 * 196608) + 262144;
  EXPECT_EQ(matmul, 1835008);
  EXPECT_EQ(s.matmul_parameters(), matmul);
  EXPECT_DOUBLE_EQ(s.flops_per_step(), 6.0 * matmul * 2048 + 3.0 * 4 * 64 * 4 * 2 * 32896.0 * 8);
}

TEST(TrainConfig, UnknownNamesAreRefusedListingTheKnownOnes) {
  test::expect_throw_naming<std::invalid_argument>([] { train_config("7b"); }, "unknown training config '7b'");
  test::expect_throw_naming<std::invalid_argument>([] { train_config(""); }, "configs: small, 1b");
}

TEST(TrainConfig, ShapeItemsNameConfigs) {
  using V = std::vector<std::string>;
  EXPECT_EQ(names(train_configs_in_spec("train")), (V{"small", "1b"}));
  EXPECT_EQ(names(train_configs_in_spec("train_1b")), (V{"1b"}));
  EXPECT_EQ(names(train_configs_in_spec("train_1b,train_small,train")), (V{"small", "1b"}));
  EXPECT_EQ(names(train_configs_in_spec("smoke")), (V{"small"}));
  EXPECT_EQ(names(train_configs_in_spec("default")), V{});
  EXPECT_EQ(names(train_configs_in_spec("decode,h8_hq2_hkv1_d4_f16_b3_q5_kv5")), V{});
  // The same items are layer sets of no shape, so that bench_e2e's layer parser accepts them and runs no layer.
  EXPECT_TRUE(parse_layer_shapes("train,train_small,train_1b").empty());
  EXPECT_EQ(parse_layer_shapes("smoke,train"), layer_shape_set("smoke"));
  test::expect_throw_naming<UsageError>([] { parse_layer_shapes("training"); }, "train, train_small, train_1b");
}

TEST(TrainTask, SameSeedAndIndexGiveTheSameTokens) {
  const auto a = synthetic_batch(4, 32, 1024, 11, 3);
  EXPECT_EQ(a, synthetic_batch(4, 32, 1024, 11, 3));
  EXPECT_NE(a, synthetic_batch(4, 32, 1024, 11, 4));
  EXPECT_NE(a, synthetic_batch(4, 32, 1024, 12, 3));
  // A row does not depend on the batch it is drawn in.
  const auto wide = synthetic_batch(8, 32, 1024, 11, 3);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), wide.begin()));
  // Fixed arithmetic: these tokens are the same on every machine (this row drew a = 1, b = 3).
  EXPECT_EQ(synthetic_batch(1, 4, 64, 0, 0), (std::vector<int64_t>{43, 46, 49, 52, 55}));
}

TEST(TrainTask, EverySequenceFollowsItsAffineRule) {
  const int64_t batch = 64, seq = 40;
  const auto tokens = synthetic_batch(batch, seq, 32000, 5, 0);
  ASSERT_EQ(tokens.size(), static_cast<std::size_t>(batch * (seq + 1)));
  std::set<std::pair<int64_t, int64_t>> rules;
  for (int64_t r = 0; r < batch; ++r) {
    const int64_t* t = tokens.data() + r * (seq + 1);
    for (int64_t i = 0; i <= seq; ++i) ASSERT_TRUE(t[i] >= 0 && t[i] < kTaskTokens) << r << " " << i;
    // The rule is the (a, b) of the task's sets that maps t[0] to t[1] and t[1] to t[2] ...; one must fit all.
    bool found = false;
    for (const int64_t a : kTaskMultipliers)
      for (const int64_t b : kTaskOffsets) {
        bool fits = true;
        for (int64_t i = 0; i < seq && fits; ++i) fits = t[i + 1] == (a * t[i] + b) % kTaskTokens;
        if (fits && !found) rules.insert({a, b});
        found = found || fits;
      }
    EXPECT_TRUE(found) << "row " << r << " follows no rule of the task";
  }
  EXPECT_GT(rules.size(), 8u) << "64 rows drew few of the 16 rules";
}

TEST(TrainTask, BadArgumentsAreRefused) {
  test::expect_throw_naming<std::invalid_argument>([] { synthetic_batch(0, 8, 1024, 1, 0); }, "batch 0");
  test::expect_throw_naming<std::invalid_argument>([] { synthetic_batch(1, 0, 1024, 1, 0); }, "seq 0");
  test::expect_throw_naming<std::invalid_argument>([] { synthetic_batch(1, 8, 63, 1, 0); }, "vocab 63");
}

}  // namespace
}  // namespace sb::bench
