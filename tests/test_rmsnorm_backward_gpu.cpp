// GPU tests of every RMSNorm backward variant (from the registry) x dtype against the fp64 reference: dx within
// a few ulps of the dtype plus its terms' fp32 error, dw within the bound of an fp32 sum over `rows`
// (bench/rmsnorm_backward_case.h states both), with NaN-poisoned dx, dw and workspace. Shapes: odd hidden
// sizes (scalar paths and tails), 1 row and a few, 64k rows (dw summed over all of them, two_kernel's chunks of
// 64 rows, persistent's grid-stride), rows wider than persistent's registers (two_kernel only). dw and dx are
// the same bits on every run; a dw missing one row's term fails verification.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>

#include "common/check.h"
#include "gpu.h"
#include "rmsnorm_backward/rmsnorm_backward.h"
#include "rmsnorm_backward_case.h"

namespace sb::bench {
namespace {

struct Shape {
  int64_t rows, hidden;
};

// Odd hidden sizes (1, 7, 769, 5123: scalar accesses and tails; 5123 is past persistent's scalar rows); model
// sizes in 1 to a few rows; 16384 (persistent's widest 16-bit row) at an odd row count; two_kernel's partial
// last group (4099 rows: 128 chunks of 32, the last of 3 rows) and chunks of 64 rows (65536 rows); 64k rows of
// 1024 and 4096, where dw sums 65536 terms; rows wider than any block's registers (262144).
const Shape kShapes[] = {{1, 1},      {1, 7},       {3, 7},        {2, 769},     {5, 769},     {2, 5123},
                         {1, 4096},   {3, 4096},    {7, 8192},     {37, 768},    {257, 16384}, {1000, 768},
                         {4099, 128}, {300, 1027},  {65536, 1024}, {65536, 4096}, {1, 262144}, {3, 262144}};

using Param = std::tuple<std::string, DType, Shape>;

std::vector<std::string> variant_names() {
  std::vector<std::string> n;
  for (const auto& v : rmsnorm_backward::variants()) n.push_back(v.name);
  return n;
}

class RmsNormBackwardGpu : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    SB_REQUIRE_GPU();
    stream_.emplace();
  }
  static const rmsnorm_backward::Variant& var() { return rmsnorm_backward::variant(std::get<0>(GetParam())); }
  static DType dtype() { return std::get<1>(GetParam()); }
  static Shape shape() { return std::get<2>(GetParam()); }
  static uint64_t seed() { return 4321 + shape().rows * 31 + shape().hidden; }

  // Skips (after checking that run() refuses it) a problem the variant does not support.
  bool refused(const RmsNormBackwardData& d) {
    if (const std::string why = var().supports(d.problem()); !why.empty()) {
      EXPECT_THROW(rmsnorm_backward::run(var(), d.problem(), stream().get()), std::invalid_argument);
      skip_reason_ = why;
      return true;
    }
    return false;
  }
  Check run_and_verify(RmsNormBackwardData& d) {
    d.poison_outputs();
    rmsnorm_backward::run(var(), d.problem(), stream().get());
    stream().sync();
    return d.verify();
  }
  Stream& stream() { return *stream_; }
  std::optional<Stream> stream_;  // created once a GPU is known to be there
  std::string skip_reason_;
};

TEST_P(RmsNormBackwardGpu, MatchesFp64Reference) {
  RmsNormBackwardData d(shape().rows, shape().hidden, dtype(), 1e-6, seed(), false, stream().get());
  if (refused(d)) GTEST_SKIP() << skip_reason_;
  const Check c = run_and_verify(d);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_LE(c.err, 1.0);
}

// The forward's saved rstd (fp32) instead of recomputing it: the same result within the same tolerance.
TEST_P(RmsNormBackwardGpu, SavedRstdPathWithinTolerance) {
  RmsNormBackwardData d(shape().rows, shape().hidden, dtype(), 1e-6, seed(), true, stream().get());
  if (refused(d)) GTEST_SKIP() << skip_reason_;
  const Check c = run_and_verify(d);
  EXPECT_TRUE(c.ok) << c.message;
}

// The same inputs give the same bits of dw and dx on every run: dw's partials are reduced in a fixed order,
// with no atomics (dx compared up to 2^24 elements; dw at every shape, 64k rows included).
TEST_P(RmsNormBackwardGpu, RepeatedRunsAreBitIdentical) {
  RmsNormBackwardData d(shape().rows, shape().hidden, dtype(), 1e-6, 99, false, stream().get());
  if (refused(d)) GTEST_SKIP() << skip_reason_;
  const rmsnorm_backward::Problem p = d.problem();
  const std::size_t dx_bytes = p.rows * p.hidden <= (int64_t{1} << 24) ? p.rows * p.hidden * size_bytes(dtype()) : 0;
  std::vector<unsigned char> dw[2], dx[2];
  for (int k = 0; k < 2; ++k) {
    d.poison_outputs();
    rmsnorm_backward::run(var(), p, stream().get());
    dx[k].resize(dx_bytes);
    if (dx_bytes) SB_CUDA_CHECK(cudaMemcpyAsync(dx[k].data(), p.dx, dx_bytes, cudaMemcpyDeviceToHost, stream().get()));
    dw[k] = d.dw_bytes();  // synchronizes
  }
  EXPECT_EQ(dw[0], dw[1]) << "dw differs between two runs";
  EXPECT_EQ(dx[0], dx[1]) << "dx differs between two runs";
}

std::string param_name(const ::testing::TestParamInfo<Param>& i) {
  const Shape s = std::get<2>(i.param);
  return std::get<0>(i.param) + "_" + std::string(name(std::get<1>(i.param))) + "_t" + std::to_string(s.rows) + "_h" +
         std::to_string(s.hidden);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, RmsNormBackwardGpu,
                         ::testing::Combine(::testing::ValuesIn(variant_names()), ::testing::ValuesIn(kAllDTypes),
                                            ::testing::ValuesIn(kShapes)),
                         param_name);

class RmsNormBackwardGpuSpecial : public ::testing::TestWithParam<std::tuple<std::string, DType>> {
 protected:
  void SetUp() override {
    SB_REQUIRE_GPU();
    stream_.emplace();
  }
  const rmsnorm_backward::Variant& var() const { return rmsnorm_backward::variant(std::get<0>(GetParam())); }
  DType dtype() const { return std::get<1>(GetParam()); }
  Stream& stream() { return *stream_; }
  std::optional<Stream> stream_;
};

// The dw tolerance is tight enough to see one row's term missing: dx of all rows comes from a full run, dw
// from a second run over all rows but the last (the same buffers, not poisoned in between).
TEST_P(RmsNormBackwardGpuSpecial, DwMissingOneRowFails) {
  const int64_t rows = 4096, hidden = 1024;
  RmsNormBackwardData d(rows, hidden, dtype(), 1e-6, 17, false, stream().get());
  rmsnorm_backward::Problem p = d.problem();
  rmsnorm_backward::run(var(), p, stream().get());
  stream().sync();
  ASSERT_TRUE(d.verify().ok);
  p.rows = rows - 1;
  rmsnorm_backward::run(var(), p, stream().get());
  stream().sync();
  const Check c = d.verify();
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("dw"), std::string::npos) << c.message;
}

// eps dominates when a row's mean square is tiny: dx follows it (recomputed rstd), and stays within tolerance.
TEST_P(RmsNormBackwardGpuSpecial, SmallRowsAndEps) {
  for (double eps : {1e-6, 1e-2}) {
    RmsNormBackwardData d(5, 1000, dtype(), eps, 23, false, stream().get());
    d.poison_outputs();
    rmsnorm_backward::run(var(), d.problem(), stream().get());
    stream().sync();
    const Check c = d.verify();
    EXPECT_TRUE(c.ok) << "eps " << eps << ": " << c.message;
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, RmsNormBackwardGpuSpecial,
                         ::testing::Combine(::testing::ValuesIn(variant_names()), ::testing::ValuesIn(kAllDTypes)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, DType>>& i) {
                           return std::get<0>(i.param) + "_" + std::string(name(std::get<1>(i.param)));
                         });

// A kernel that leaves an element of dw unwritten fails: the NaN poison is what catches it.
TEST(RmsNormBackwardVerify, UnwrittenDwFails) {
  SB_REQUIRE_GPU();
  Stream s;
  RmsNormBackwardData d(4, 64, DType::bf16, 1e-6, 3, false, s.get());
  rmsnorm_backward::run(rmsnorm_backward::variant("two_kernel"), d.problem(), s.get());
  s.sync();
  ASSERT_TRUE(d.verify().ok);
  SB_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(d.problem().dw) + 2 * 5, 0xff, 2, s.get()));  // a bf16 NaN
  s.sync();
  const Check c = d.verify();
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("dw row 0 col 5"), std::string::npos) << c.message;
}

}  // namespace
}  // namespace sb::bench
