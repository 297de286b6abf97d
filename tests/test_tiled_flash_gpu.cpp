// GPU tests of the prefill variants, tiled_flash and wgmma_flash (the same algorithm on wgmma), beyond the
// registry-wide ones (test_attention_gpu.cpp), against the fp64 reference with FlashAttention's tolerance
// rule (bench/attention_case.h): lengths 1, 17, 113, 1000, 1025, 2049 and 4097 (tails of the 128- and
// 192-row Q tiles and of the 64/128-key K/V tiles), causal and not, GQA 1, 2, 4 and 8, head dims 64 and
// 128, fp16 and bf16; bottom-right causal with q_len < kv_len and q_len > kv_len (fully masked rows and
// whole fully masked Q tiles give 0); bit-identical repeats; and the refusals (head_dim 80 and 96, fp32)
// through attention::run.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "attention/attention.h"
#include "attention/wgmma_flash.h"
#include "attention_case.h"
#include "attention_test.h"
#include "common/check.h"
#include "common/device.h"
#include "expect.h"
#include "gpu.h"

namespace sb::bench {
namespace {

const char* const kVariants[] = {"tiled_flash", "wgmma_flash"};

// {batch, heads_q, heads_kv, head_dim, q_len, kv_len, causal}
const AttentionDims kShapes[] = {
    // q_len == kv_len
    {1, 1, 1, 64, 1, 1, false},
    {1, 4, 1, 128, 1, 1, true},
    {2, 4, 1, 64, 17, 17, true},
    {1, 8, 8, 128, 17, 17, false},
    {2, 8, 1, 64, 113, 113, false},
    {1, 8, 1, 128, 113, 113, true},
    {1, 4, 4, 64, 1000, 1000, true},
    {2, 8, 2, 128, 1000, 1000, false},
    {1, 8, 1, 64, 1025, 1025, false},
    {1, 4, 1, 128, 1025, 1025, true},
    {1, 2, 2, 64, 4097, 4097, true},
    {1, 8, 1, 128, 4097, 4097, true},
    {1, 4, 4, 128, 4097, 4097, false},
    // causal, q_len < kv_len: query i sees keys j <= i + kv_len - q_len
    {1, 8, 2, 128, 64, 200, true},
    {2, 4, 1, 64, 17, 1000, true},
    {1, 4, 4, 128, 130, 4097, true},
    // causal, q_len > kv_len: the first q_len - kv_len rows see no key (rows 0-199 here: a whole Q tile)
    {1, 4, 4, 64, 37, 20, true},
    {1, 4, 2, 128, 300, 100, true},
    {1, 2, 2, 64, 1000, 1, true},
    // wgmma_flash's three-warpgroup blocks (192 rows: D 64, causal from 2048 rows) with bottom-right masks:
    // rows 0-1799 see no key (9 whole tiles); a last tile of 129 rows (its third warpgroup has 1) against
    // a longer cache, GQA 2
    {1, 4, 1, 64, 2100, 300, true},
    {1, 4, 2, 64, 2049, 4500, true},
    // wgmma_flash's persistent blocks (D 64, >= 2 work items an SM on a GPU of up to 132 SMs here, items of
    // few K/V tiles) with two warpgroups (causal under 2048 rows): many items a block with tails, GQA 4 and 8;
    // q_len > kv_len with 6 whole tiles that see no key; q_len < kv_len
    {4, 32, 8, 64, 1000, 1000, true},
    {2, 32, 4, 64, 1500, 700, true},
    {3, 64, 8, 64, 777, 2000, true},
    // ... and with three warpgroups (D 64, unmasked or causal from 2048 rows): a last tile of 140 rows (its
    // third warpgroup has 12), GQA 4; q_len > kv_len with 11 whole tiles that see no key; q_len < kv_len
    {2, 32, 8, 64, 1100, 1100, false},
    {1, 48, 8, 64, 2500, 300, true},
    {1, 40, 8, 64, 2049, 3000, true},
    // ... and at D 128, items of at most 8 K/V tiles (no intra-warpgroup overlap):
    // causal with a 104-row last tile, GQA 4; unmasked q_len < kv_len, GQA 3; causal q_len > kv_len with 3
    // whole tiles that see no key
    {2, 32, 8, 128, 1000, 1000, true},
    {4, 24, 8, 128, 600, 1000, false},
    {2, 40, 8, 128, 700, 300, true},
    // not causal, q_len != kv_len
    {1, 4, 4, 128, 100, 300, false},
    {2, 4, 2, 64, 300, 77, false},
};

const DType kDTypes[] = {DType::f16, DType::bf16};

using Param = std::tuple<const char*, DType, AttentionDims>;

class TiledFlashGpu : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    SB_REQUIRE_GPU();
    stream_.emplace();
    data_.emplace(std::get<2>(GetParam()), std::get<1>(GetParam()), 31, stream_->get());
    // wgmma_flash needs an sm_90 GPU and a build for sm_90a: elsewhere it is skipped with its reason.
    if (const std::string why = var().supports(data_->problem()); why.find("sm_90") != std::string::npos)
      GTEST_SKIP() << why;
    data_->reserve_workspace(var().workspace_bytes(data_->problem()));  // wgmma_flash's persistent counter
  }
  const attention::Variant& var() const { return attention::variant(std::get<0>(GetParam())); }
  std::optional<Stream> stream_;
  std::optional<AttentionData> data_;
};

TEST_P(TiledFlashGpu, MatchesReferenceWithinFlashAttentionRule) {
  const attention::Problem p = data_->problem();
  ASSERT_EQ(var().supports(p), "");
  data_->poison_output();
  attention::run(var(), p, stream_->get());
  stream_->sync();
  const Check c = data_->verify();
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_LE(c.err, 1.0);
}

TEST_P(TiledFlashGpu, RepeatedRunsAreBitIdentical) {
  const attention::Problem p = data_->problem();
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

INSTANTIATE_TEST_SUITE_P(Shapes, TiledFlashGpu,
                         ::testing::Combine(::testing::ValuesIn(kVariants), ::testing::ValuesIn(kDTypes),
                                            ::testing::ValuesIn(kShapes)),
                         [](const ::testing::TestParamInfo<Param>& i) {
                           return std::string(std::get<0>(i.param)) + "_" + std::string(name(std::get<1>(i.param))) + "_" +
                                  shape_name(std::get<2>(i.param));
                         });

// The shapes above reach wgmma_flash's persistent kernel on this GPU (else its tests would pass without
// running it), and its workspace is the counter's slot there, none elsewhere; without it, run() refuses.
TEST(WgmmaFlash, ShapesReachThePersistentKernel) {
  SB_REQUIRE_GPU();
  const attention::Variant w = attention::variant("wgmma_flash");
  const int sms = device_sm_count();
  // Tensors at an aligned address that nothing reads: the problems below are only planned or refused.
  void* const fake = reinterpret_cast<void*>(uintptr_t{1} << 20);
  auto problem_of = [&](const AttentionDims& d) {
    attention::Problem p{};
    p.batch = d.batch, p.heads_q = d.heads_q, p.heads_kv = d.heads_kv, p.head_dim = d.head_dim;
    p.q_len = d.q_len, p.kv_len = d.kv_len, p.causal = d.causal;
    p.dtype = DType::bf16;
    p.q = p.k = p.v = fake;
    p.o = fake;
    return p;
  };
  int d64_two = 0, d64_three = 0, d128 = 0;  // shapes on each persistent configuration
  for (const AttentionDims& d : kShapes) {
    const attention::Problem p = problem_of(d);
    const bool is = attention::wgmma_flash::persistent(p, sms);
    (p.head_dim == 128 ? d128 : attention::wgmma_flash::warpgroups(p) == 2 ? d64_two : d64_three) += is;
    EXPECT_EQ(w.workspace_bytes(p), is ? 256u : 0u) << shape_name(d);
    // Without the workspace it needs, attention::run refuses before any launch, naming the bytes.
    if (is && w.supports(p).empty())
      test::expect_throw_naming<std::invalid_argument>([&] { attention::run(w, p, nullptr); }, "256 needed");
  }
  EXPECT_GE(d64_two, 3) << "head_dim 64, two warpgroups, on " << sms << " SMs";
  EXPECT_GE(d64_three, 3) << "head_dim 64, three warpgroups, on " << sms << " SMs";
  EXPECT_GE(d128, 3) << "head_dim 128, on " << sms << " SMs";
}

// Unsupported problems are std::invalid_argument from attention::run, naming the reason.
TEST(TiledFlash, RefusalsNameTheReason) {
  SB_REQUIRE_GPU();
  for (const char* v : kVariants)
    test::expect_refusals(attention::variant(v), {
                                                     {{1, 2, 2, 80, 16, 16, false}, DType::bf16, "head_dim 80"},
                                                     {{1, 2, 1, 96, 16, 16, true}, DType::f16, "head_dim 96"},
                                                     {{1, 2, 2, 64, 16, 16, false}, DType::f32, "fp32"},
                                                 });
}

}  // namespace
}  // namespace sb::bench
