// GPU tests of every attention variant (from the registry) x dtype against the fp64 reference with
// FlashAttention's tolerance rule (bench/attention_case.h): odd lengths, causal with q_len == kv_len,
// q_len < kv_len and q_len > kv_len (fully masked rows give 0), GQA ratios 1, 4 and 8 and MQA, head
// dims 64, 80 and 128, decode.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "attention/attention.h"
#include "attention_case.h"
#include "attention_test.h"
#include "common/check.h"
#include "gpu.h"

namespace sb::bench {
namespace {

const AttentionDims kShapes[] = {
    {1, 1, 1, 64, 1, 1, false},       {1, 2, 2, 64, 17, 17, true},      {2, 4, 1, 64, 113, 113, false},
    {1, 8, 2, 128, 113, 113, true},   {1, 8, 1, 128, 64, 200, true},    {1, 4, 4, 64, 37, 20, true},
    {2, 4, 2, 128, 1, 1000, false},   {1, 2, 2, 80, 33, 33, false},     {1, 4, 4, 128, 1025, 1025, true},
    {3, 32, 8, 128, 1, 4097, false},  {1, 4, 1, 64, 3, 12100, true},   // a row past the shared-memory cache
};

using Param = std::tuple<std::string, DType, AttentionDims>;

class AttentionGpu : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    SB_REQUIRE_GPU();
    stream_.emplace();
    data_.emplace(std::get<2>(GetParam()), std::get<1>(GetParam()), 2024, stream_->get());
    const attention::Problem p = data_->problem();
    if (var().supports(p).empty()) data_->reserve_workspace(var().workspace_bytes(p));
  }
  const attention::Variant& var() const { return attention::variant(std::get<0>(GetParam())); }
  std::optional<Stream> stream_;
  std::optional<AttentionData> data_;
};

TEST_P(AttentionGpu, MatchesReferenceWithinFlashAttentionRule) {
  const attention::Problem p = data_->problem();
  if (const std::string why = var().supports(p); !why.empty()) GTEST_SKIP() << why;
  data_->poison_output();
  attention::run(var(), p, stream_->get());
  stream_->sync();
  const Check c = data_->verify();
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_LE(c.err, 1.0);
}

TEST_P(AttentionGpu, RepeatedRunsAreBitIdentical) {
  const attention::Problem p = data_->problem();
  if (const std::string why = var().supports(p); !why.empty()) GTEST_SKIP() << why;
  const std::size_t bytes = p.batch * p.q_len * p.heads_q * p.head_dim * size_bytes(p.dtype);
  std::vector<unsigned char> first(bytes), again(bytes);
  for (auto* out : {&first, &again}) {
    data_->poison_output();
    attention::run(var(), p, stream_->get());
    SB_CUDA_CHECK(cudaMemcpyAsync(out->data(), p.o, bytes, cudaMemcpyDeviceToHost, stream_->get()));
    stream_->sync();
  }
  EXPECT_EQ(first, again);
}

// ref_kv_read, bench_attention's decode reference, reads K and V once: its check passes (exactly: err 0);
// a misaligned K, a null V and a short workspace are refused with their reasons.
TEST(AttentionKvRead, ReadsEveryByteOfKAndVOnce) {
  SB_REQUIRE_GPU();
  Stream s;
  for (const DType dtype : {DType::bf16, DType::f32}) {
    AttentionData data({3, 32, 8, 128, 1, 4097, false}, dtype, 7, s.get());
    data.reserve_workspace(kv_read_workspace_bytes(data.problem()));
    const attention::Problem p = data.problem();
    ASSERT_EQ(kv_read_supports(p), "");
    const Check c = check_kv_read(p, s.get());
    EXPECT_TRUE(c.ok) << name(dtype) << ": " << c.message;
    EXPECT_EQ(c.err, 0.0);
    attention::Problem shifted = p;
    shifted.k = static_cast<const char*>(p.k) + 8;
    EXPECT_NE(kv_read_supports(shifted).find("aligned"), std::string::npos) << kv_read_supports(shifted);
    attention::Problem no_v = p;
    no_v.v = nullptr;
    EXPECT_NE(kv_read_supports(no_v).find("null"), std::string::npos) << kv_read_supports(no_v);
    attention::Problem short_ws = p;
    short_ws.workspace_size = kv_read_workspace_bytes(p) - sizeof(unsigned);
    test::expect_throw_naming<std::invalid_argument>([&] { launch_kv_read(short_ws, s.get()); }, "workspace");
  }
}

// ref_kv_stream, the decode reference in decode_splitk's order, reads K and V once where decode_splitk runs
// unsplit: at one kv head a block (GQA, head_dim 128 and 64) and two (MHA), with kv_len not a multiple of a
// stage's keys, its check passes exactly. A problem decode_splitk splits (batch 1), one it does not take (fp32),
// a misaligned K and a short workspace are refused with their reasons.
TEST(AttentionKvStream, ReadsEveryByteOfKAndVOnceInDecodeOrder) {
  SB_REQUIRE_GPU();
  Stream s;
  const int sms = device_info().sm_count;
  // Enough (batch, kv unit) blocks that decode_splitk does not split on this GPU (kNoSplitFill of its slots).
  const int64_t gqa_batch = (sms + 7) / 8 + 1, mha_batch = (sms * 4 + 15) / 16 + 1;
  const AttentionDims shapes[] = {{gqa_batch, 32, 8, 128, 1, 1001, false},
                                  {gqa_batch, 16, 8, 64, 1, 777, false},
                                  {mha_batch, 16, 16, 128, 1, 333, false}};
  for (const AttentionDims& dims : shapes) {
    AttentionData data(dims, DType::bf16, 11, s.get());
    data.reserve_workspace(kv_stream_workspace_bytes(data.problem()));
    const attention::Problem p = data.problem();
    ASSERT_EQ(kv_stream_supports(p), "") << "batch " << dims.batch << ", " << dims.heads_kv << " kv heads, d " << dims.head_dim;
    const Check c = check_kv_stream(p, s.get());
    EXPECT_TRUE(c.ok) << "batch " << dims.batch << ", d " << dims.head_dim << ": " << c.message;
    EXPECT_EQ(c.err, 0.0);
    attention::Problem short_ws = p;
    short_ws.workspace_size = kv_stream_workspace_bytes(p) - sizeof(unsigned);
    test::expect_throw_naming<std::invalid_argument>([&] { launch_kv_stream(short_ws, s.get()); }, "workspace");
    attention::Problem shifted = p;
    shifted.k = static_cast<const char*>(p.k) + 8;
    EXPECT_NE(kv_stream_supports(shifted).find("aligned"), std::string::npos) << kv_stream_supports(shifted);
    test::expect_throw_naming<std::invalid_argument>([&] { launch_kv_stream(shifted, s.get()); }, "aligned");
  }
  AttentionData one({1, 32, 8, 128, 1, 4096, false}, DType::bf16, 12, s.get());
  EXPECT_NE(kv_stream_supports(one.problem()).find("splits"), std::string::npos) << kv_stream_supports(one.problem());
  AttentionData f32({gqa_batch, 32, 8, 128, 1, 256, false}, DType::f32, 13, s.get());
  EXPECT_NE(kv_stream_supports(f32.problem()).find("decode_splitk does not take"), std::string::npos)
      << kv_stream_supports(f32.problem());
}

// bench_attention keeps a shape's fp64 reference while it rebuilds the shape's inputs (data_for): a
// reference is adopted by inputs drawn from the same seed, and refused by others, which then verify
// against their own; an empty one is refused.
TEST(AttentionReference, KeptOnlyForTheSameInputs) {
  SB_REQUIRE_GPU();
  Stream s;
  const AttentionDims dims{1, 8, 2, 128, 113, 113, true};
  const std::string name = "manual";  // named: GCC 13 warns of a reference bound through a temporary argument
  const attention::Variant& manual = attention::variant(name);
  auto run_and_verify = [&](AttentionData& data) {
    data.reserve_workspace(manual.workspace_bytes(data.problem()));
    data.poison_output();
    attention::run(manual, data.problem(), s.get());
    s.sync();
    return data.verify();
  };
  AttentionData first(dims, DType::bf16, 11, s.get());
  ASSERT_TRUE(run_and_verify(first).ok);
  const AttentionData::Reference reference = first.take_reference();
  ASSERT_FALSE(reference.rows.empty());
  EXPECT_TRUE(first.take_reference().rows.empty());  // moved out

  AttentionData same(dims, DType::bf16, 11, s.get());
  EXPECT_TRUE(same.adopt_reference(reference));
  const Check c_same = run_and_verify(same);
  EXPECT_TRUE(c_same.ok) << c_same.message;

  AttentionData other(dims, DType::bf16, 12, s.get());
  EXPECT_FALSE(other.adopt_reference(reference));
  const Check c_other = run_and_verify(other);
  EXPECT_TRUE(c_other.ok) << c_other.message;

  AttentionData other_dtype(dims, DType::f16, 11, s.get());
  EXPECT_FALSE(other_dtype.adopt_reference(reference));
  EXPECT_FALSE(same.adopt_reference(AttentionData::Reference{}));
}

INSTANTIATE_TEST_SUITE_P(AllVariants, AttentionGpu,
                         ::testing::Combine(::testing::ValuesIn(test::attention_variant_names()), ::testing::ValuesIn(kAllDTypes),
                                            ::testing::ValuesIn(kShapes)),
                         [](const ::testing::TestParamInfo<Param>& i) {
                           return test::attention_case_name(std::get<0>(i.param), std::get<1>(i.param),
                                                            std::get<2>(i.param));
                         });

}  // namespace
}  // namespace sb::bench
