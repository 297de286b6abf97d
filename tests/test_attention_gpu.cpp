// GPU tests of every attention variant (from the registry) x dtype against the fp64 reference with
// FlashAttention's tolerance rule (bench/attention_case.h): odd lengths, causal with q_len == kv_len,
// q_len < kv_len and q_len > kv_len (fully masked rows give 0), GQA ratios 1, 4 and 8 and MQA, head
// dims 64, 80 and 128, decode; the same over bench_attention's "edge" set (odd head counts, odd decode
// batches, KV lengths off every tile, KV 262144); and extreme logits, where the output must be V.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "attention_case.h"
#include "attention_shapes.h"
#include "attention_test.h"
#include "common/check.h"
#include "gpu.h"
#include "harness/fill.h"

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
  if (const std::string why = var().supports(p); !why.empty()) {
    // A refused problem is an error from attention::run, never a launch.
    EXPECT_THROW(attention::run(var(), p, stream_->get()), std::invalid_argument);
    GTEST_SKIP() << why;
  }
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

// `values` rounded to dtype t, as the device stores them.
std::vector<unsigned char> to_dtype(const std::vector<float>& values, DType t) {
  std::vector<unsigned char> out(values.size() * size_bytes(t));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (t == DType::f32) {
      std::memcpy(&out[4 * i], &values[i], 4);
    } else if (t == DType::f16) {
      const __half h = __float2half_rn(values[i]);
      std::memcpy(&out[2 * i], &h, 2);
    } else {
      const __nv_bfloat16 b = __float2bfloat16_rn(values[i]);
      std::memcpy(&out[2 * i], &b, 2);
    }
  }
  return out;
}

// Every logit of a row equal and far from 0 (FlashInfer's extreme-logit cases): Q = 6 and K = -6, then +6,
// everywhere, so q.k = -/+36 head_dim, scaled -/+288 at head_dim 64 and -/+407 at 128. exp() of that
// underflows to 0 (overflows to inf) in fp32, so a softmax that does not subtract the row max gives 0/0 or
// inf/inf, and one that underflows every term gives 0. V is the same at every key, V[b, j, h, d] = v(h, d), a
// multiple of 1/8 (exact in every dtype): a row that sees any key outputs v(its kv head, d), and a causal row
// that sees none outputs exactly 0. Within 2 ulps of the dtype of max(|v|, 1/8) (the probabilities 1/n
// round to the dtype before P V in manual); fp32 within 2^-12 (its fp32 sum of n such probabilities).
TEST_P(AttentionGpu, ExtremeLogitsGiveV) {
  const attention::Problem p = data_->problem();
  if (const std::string why = var().supports(p); !why.empty()) GTEST_SKIP() << why;
  const DType t = p.dtype;
  const int64_t group = p.heads_q / p.heads_kv;
  auto v_of = [](int64_t h, int64_t d) { return 0.125f * static_cast<float>((d * 7 + h * 3) % 17 - 8); };
  // V: one key position's heads_kv x head_dim values, then copied over all batch x kv_len positions by doubling.
  std::vector<float> v_row(p.heads_kv * p.head_dim);
  for (int64_t h = 0; h < p.heads_kv; ++h)
    for (int64_t d = 0; d < p.head_dim; ++d) v_row[h * p.head_dim + d] = v_of(h, d);
  const std::vector<unsigned char> v_bytes = to_dtype(v_row, t);
  char* v = static_cast<char*>(const_cast<void*>(p.v));
  const int64_t positions = p.batch * p.kv_len, row_bytes = static_cast<int64_t>(v_bytes.size());
  SB_CUDA_CHECK(cudaMemcpyAsync(v, v_bytes.data(), row_bytes, cudaMemcpyHostToDevice, stream_->get()));
  for (int64_t done = 1; done < positions; done *= 2)
    SB_CUDA_CHECK(cudaMemcpyAsync(v + done * row_bytes, v, std::min(done, positions - done) * row_bytes,
                                  cudaMemcpyDeviceToDevice, stream_->get()));
  fill_normal(const_cast<void*>(p.q), p.batch * p.q_len * p.heads_q * p.head_dim, t, 1, 6.0f, 0.0f, stream_->get());
  const double tol = std::max(4.0 * unit_roundoff(t), t == DType::f32 ? 0x1p-12 : 0.0);
  const int64_t n_o = p.batch * p.q_len * p.heads_q * p.head_dim;
  for (const float k_value : {-6.0f, 6.0f}) {
    fill_normal(const_cast<void*>(p.k), p.batch * p.kv_len * p.heads_kv * p.head_dim, t, 1, k_value, 0.0f,
                stream_->get());
    data_->poison_output();
    attention::run(var(), p, stream_->get());
    const std::vector<double> o = fetch_all(p.o, t, n_o, stream_->get());
    int64_t bad = 0;
    for (int64_t e = 0; e < n_o; ++e) {
      const int64_t d = e % p.head_dim, h = e / p.head_dim % p.heads_q, i = e / (p.head_dim * p.heads_q) % p.q_len;
      const int64_t seen = p.causal ? std::clamp<int64_t>(i + p.kv_len - p.q_len + 1, 0, p.kv_len) : p.kv_len;
      const double want = seen == 0 ? 0.0 : v_of(h / group, d);
      const double limit = seen == 0 ? 0.0 : tol * std::max(std::fabs(want), 0.125);
      if (!(std::fabs(o[e] - want) <= limit) && bad++ < 5)
        ADD_FAILURE() << "k = " << k_value << ", row " << i << " head " << h << " dim " << d << " (" << seen
                      << " keys seen): got " << o[e] << ", want " << want;
    }
    EXPECT_EQ(bad, 0) << "k = " << k_value << ": " << bad << " of " << n_o << " outputs wrong";
  }
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

std::string param_name(const ::testing::TestParamInfo<Param>& i) {
  return test::attention_case_name(std::get<0>(i.param), std::get<1>(i.param), std::get<2>(i.param));
}

INSTANTIATE_TEST_SUITE_P(AllVariants, AttentionGpu,
                         ::testing::Combine(::testing::ValuesIn(test::attention_variant_names()), ::testing::ValuesIn(kAllDTypes),
                                            ::testing::ValuesIn(kShapes)),
                         param_name);

// bench_attention's "edge" set (bench/attention_shapes.cpp: the classes of the peers' test suites) in every
// variant and dtype: each case verifies or is refused by its variant's supports() with the reason.
std::vector<AttentionDims> edge_shapes() {
  std::vector<AttentionDims> d;
  for (const AttentionShape& s : attention_shape_set("edge"))
    d.push_back({s.batch, s.heads_q, s.heads_kv, s.head_dim, s.q_len, s.kv_len, s.causal});
  return d;
}

INSTANTIATE_TEST_SUITE_P(Edge, AttentionGpu,
                         ::testing::Combine(::testing::ValuesIn(test::attention_variant_names()), ::testing::ValuesIn(kAllDTypes),
                                            ::testing::ValuesIn(edge_shapes())),
                         param_name);

}  // namespace
}  // namespace sb::bench
