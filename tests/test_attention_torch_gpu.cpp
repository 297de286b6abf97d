// Every attention variant against libtorch on problems too large for the fp64 CPU reference to check
// in full (it samples rows there): every output element, with FlashAttention's rule
//   max |ours - ref32| <= 2 * max |ref_same - ref32| + 1e-5
// where ref32 is SDPA's math op on inputs upcast to fp64 and ref_same the same op computing in the
// problem's dtype (torch_ref::reference). Built only with libtorch (SOLBENCH_HAVE_TORCH).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "attention/attention.h"
#include "attention_case.h"
#include "attention_test.h"
#include "gpu.h"
#include "ref/torch/torch_attention.h"

namespace sb::bench {
namespace {

const AttentionDims kLarge[] = {
    {2, 16, 16, 128, 2048, 2048, true},  // prefill, causal, MHA
    {1, 32, 8, 128, 2048, 2048, false},  // prefill, GQA 4
    {1, 32, 8, 128, 1, 32768, false},    // decode against a long cache, GQA 4
    {8, 32, 8, 128, 4, 4099, true},      // 4 query tokens (speculative decoding), bottom-right causal
    {1, 8, 1, 64, 1000, 3001, true},     // q_len < kv_len, causal, MQA
    {1, 8, 8, 64, 3000, 1000, true},     // q_len > kv_len: the first 2000 rows see no key and give 0
};

using Param = std::tuple<std::string, DType, AttentionDims>;

class AttentionTorch : public ::testing::TestWithParam<Param> {};

TEST_P(AttentionTorch, EveryElementWithinFlashAttentionRule) {
  SB_REQUIRE_GPU();
  const auto& [variant_name, dtype, dims] = GetParam();
  const attention::Variant& v = attention::variant(variant_name);
  Stream stream;
  AttentionData data(dims, dtype, 77, stream.get());
  attention::Problem p = data.problem();
  if (const std::string why = v.supports(p); !why.empty()) GTEST_SKIP() << why;
  data.reserve_workspace(v.workspace_bytes(p));
  p = data.problem();
  data.poison_output();
  attention::run(v, p, stream.get());

  const std::size_t n = static_cast<std::size_t>(dims.batch * dims.q_len * dims.heads_q * dims.head_dim);
  DeviceBuffer ref32(n * sizeof(float)), same(n * size_bytes(dtype));
  const std::string refused = torch_ref::reference(p, ref32.get(), same.get(), stream.get());
  ASSERT_EQ(refused, "") << "libtorch refused the reference";
  const std::vector<double> ours = fetch_all(p.o, dtype, n, stream.get());
  const std::vector<double> hi = fetch_all(ref32.get(), DType::f32, n, stream.get());
  const std::vector<double> lo = fetch_all(same.get(), dtype, n, stream.get());

  double err = 0, base = 0;
  std::size_t worst = 0, nonfinite = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(ours[i])) {
      ++nonfinite;
      continue;
    }
    const double e = std::fabs(ours[i] - hi[i]);
    if (e > err) {
      err = e;
      worst = i;
    }
    base = std::max(base, std::fabs(lo[i] - hi[i]));
  }
  EXPECT_EQ(nonfinite, 0u) << "elements of O that are NaN or Inf";
  const double bound = 2 * base + 1e-5;
  EXPECT_LE(err, bound) << "max |ours - ref32| = " << err << " at element " << worst << " (ours " << ours[worst]
                        << ", ref32 " << hi[worst] << "); the same-dtype reference is off by " << base;
}

INSTANTIATE_TEST_SUITE_P(AllVariants, AttentionTorch,
                         ::testing::Combine(::testing::ValuesIn(test::attention_variant_names()),
                                            ::testing::Values(DType::f16, DType::bf16), ::testing::ValuesIn(kLarge)),
                         [](const ::testing::TestParamInfo<Param>& i) {
                           return test::attention_case_name(std::get<0>(i.param), std::get<1>(i.param),
                                                            std::get<2>(i.param));
                         });

}  // namespace
}  // namespace sb::bench
