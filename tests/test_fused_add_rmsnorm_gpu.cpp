// GPU tests of every fused residual-add + RMSNorm variant (from the registry) x dtype against the fp64
// reference (bench/fused_add_rmsnorm_case.h): the residual output equal to it bit for bit (one rounded add),
// x within rmsnorm_tolerance (a few ulps of the dtype), every element of both outputs checked (the op is in
// place, so nothing can be poisoned; a guard band after the buffers catches writes past their end), over tails,
// odd sizes, every launch regime of the vectorized variant, wide rows, large magnitudes and non-finite values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/check.h"
#include "fused_add_rmsnorm/fused_add_rmsnorm.h"
#include "fused_add_rmsnorm_case.h"
#include "gpu.h"

namespace sb::bench {
namespace {

struct Shape {
  int64_t rows, hidden;
};

// Odd hidden sizes (element accesses: 1, 7, 127, 769; 5123 past 4096 elements takes the two-pass kernel);
// the vectorized variant's regimes (rmsnorm::vectorized_config): decode rows of one warp of 1 or 2 vectors a
// lane (256, 392), 4 warps (1 x 4096, 7 x 4096), 8 warps (64 x 8192) and 16 warps (fp32 8192); latency rows with w
// staged (8200, 16384, and 32768 16-bit: 64 KB of w, past the 48 KB default); bandwidth rows (257 x 4096 with
// 2 rows a block, 1000 x 768, 4099 x 1024 and 8193 x 128 with many rows a block and a partial last block,
// 300 x 6000 and 260 x 8192 of 8-16 KB, 301 x 16384 unstaged, 4097 x 1 with 128 rows a block); two-pass rows (2 x 65536,
// and wide rows of 262144 elements).
const Shape kShapes[] = {{1, 1},      {1, 7},      {3, 127},     {5, 769},    {2, 5123},   {1, 256},
                         {1, 392},    {1, 4096},   {7, 4096},    {64, 8192},  {1, 8192},   {1, 8200},
                         {2, 16384},  {1, 32768},  {257, 4096},  {1000, 768}, {4099, 1024}, {8193, 128},
                         {300, 6000}, {260, 8192}, {301, 16384}, {4097, 1},   {2, 65536},  {1, 262144},
                         {3, 262144}};

using Param = std::tuple<std::string, DType, Shape>;

std::vector<std::string> variant_names() {
  std::vector<std::string> n;
  for (const auto& v : fused_add_rmsnorm::variants()) n.push_back(v.name);
  return n;
}

// Both outputs (x then residual, contiguous in FusedAddRmsNormData's working buffers), as bytes.
std::vector<unsigned char> outputs(const FusedAddRmsNormData& d, cudaStream_t s) {
  std::vector<unsigned char> out(d.copy_bytes());
  SB_CUDA_CHECK(cudaMemcpyAsync(out.data(), d.problem().x, out.size(), cudaMemcpyDeviceToHost, s));
  SB_CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

class FusedAddRmsNormGpu : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    SB_REQUIRE_GPU();
    stream_.emplace();
  }
  static const fused_add_rmsnorm::Variant& var() { return fused_add_rmsnorm::variant(std::get<0>(GetParam())); }
  static DType dtype() { return std::get<1>(GetParam()); }
  // Restores the inputs, runs the variant once and synchronizes.
  void run(const FusedAddRmsNormData& d) {
    d.restore(stream().get());
    fused_add_rmsnorm::run(var(), d.problem(), stream().get());
    stream().sync();
  }
  Stream& stream() { return *stream_; }
  std::optional<Stream> stream_;  // created once a GPU is known to be there
};

TEST_P(FusedAddRmsNormGpu, MatchesFp64Reference) {
  const Shape sh = std::get<2>(GetParam());
  FusedAddRmsNormData data(sh.rows, sh.hidden, dtype(), 1e-6, 1234 + sh.rows * 31 + sh.hidden, stream().get());
  if (const std::string why = var().supports(data.problem()); !why.empty()) {
    EXPECT_THROW(fused_add_rmsnorm::run(var(), data.problem(), stream().get()), std::invalid_argument);
    GTEST_SKIP() << why;
  }
  run(data);
  const Check c = data.verify();
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_LE(c.err, 1.0);
}

// The same inputs give the same bits in both outputs on every run (no atomics, no order that depends on timing).
TEST_P(FusedAddRmsNormGpu, RepeatedRunsAreBitIdentical) {
  const Shape sh = std::get<2>(GetParam());
  if (sh.rows * sh.hidden > (1 << 20)) GTEST_SKIP() << "covered by the smaller shapes";
  FusedAddRmsNormData data(sh.rows, sh.hidden, dtype(), 1e-6, 99, stream().get());
  run(data);
  const std::vector<unsigned char> first = outputs(data, stream().get());
  run(data);
  EXPECT_EQ(first, outputs(data, stream().get()));
}

std::string param_name(const ::testing::TestParamInfo<Param>& i) {
  const Shape s = std::get<2>(i.param);
  return std::get<0>(i.param) + "_" + std::string(name(std::get<1>(i.param))) + "_t" + std::to_string(s.rows) + "_h" +
         std::to_string(s.hidden);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, FusedAddRmsNormGpu,
                         ::testing::Combine(::testing::ValuesIn(variant_names()), ::testing::ValuesIn(kAllDTypes),
                                            ::testing::ValuesIn(kShapes)),
                         param_name);

class FusedAddRmsNormGpuSpecial : public ::testing::TestWithParam<std::tuple<std::string, DType>> {
 protected:
  void SetUp() override {
    SB_REQUIRE_GPU();
    stream_.emplace();
  }
  DType dtype() const { return std::get<1>(GetParam()); }
  Check run(FusedAddRmsNormData& d) {
    d.restore(stream().get());
    fused_add_rmsnorm::run(fused_add_rmsnorm::variant(std::get<0>(GetParam())), d.problem(), stream().get());
    stream().sync();
    return d.verify();
  }
  Stream& stream() { return *stream_; }
  std::optional<Stream> stream_;
};

// Sums near fp16's largest finite value: their squares (3.6e9) overflow fp16 but not the fp32 accumulator.
TEST_P(FusedAddRmsNormGpuSpecial, LargeMagnitudesDoNotOverflow) {
  const int64_t rows = 3, hidden = 4096;
  FusedAddRmsNormData d(rows, hidden, dtype(), 1e-6, 7, stream().get());
  std::vector<float> x(rows * hidden), r(rows * hidden);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = (i % 3 ? 30000.0f : -29000.0f) + static_cast<float>(i % 17);
    r[i] = (i % 3 ? 29000.0f : -30000.0f) - static_cast<float>(i % 13);
  }
  d.set_inputs(x, r);
  const Check c = run(d);
  EXPECT_TRUE(c.ok) << c.message;
}

// An Inf or NaN input, or a sum that overflows the dtype, makes its row of x non-finite (as in the fp64
// reference, which verify() matches element by element, NaN for NaN) and no other row; the residual is the
// rounded sum in every row.
TEST_P(FusedAddRmsNormGpuSpecial, NonFiniteValuesStayInTheirRow) {
  const int64_t rows = 6, hidden = 1000;
  FusedAddRmsNormData d(rows, hidden, dtype(), 1e-6, 5, stream().get());
  std::vector<float> x(rows * hidden), r(rows * hidden);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = std::sin(0.37f * static_cast<float>(i)) + 0.1f;
    r[i] = std::cos(0.11f * static_cast<float>(i));
  }
  const float big = dtype() == DType::f16 ? 60000.0f : 3.0e38f;  // finite; twice it is not
  x[1 * hidden + 500] = std::numeric_limits<float>::infinity();
  r[2 * hidden + 7] = big;
  x[2 * hidden + 7] = big;
  r[4 * hidden + 3] = std::numeric_limits<float>::quiet_NaN();
  d.set_inputs(x, r);
  const Check c = run(d);
  EXPECT_TRUE(c.ok) << c.message;
}

INSTANTIATE_TEST_SUITE_P(AllVariants, FusedAddRmsNormGpuSpecial,
                         ::testing::Combine(::testing::ValuesIn(variant_names()), ::testing::ValuesIn(kAllDTypes)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, DType>>& i) {
                           return std::get<0>(i.param) + "_" + std::string(name(std::get<1>(i.param)));
                         });

// verify() itself: an element of x left as its input (unwritten), a residual one ulp off, a byte written past
// residual's end: each fails, naming where.
class FusedAddRmsNormVerify : public ::testing::Test {
 protected:
  void SetUp() override {
    SB_REQUIRE_GPU();
    stream_.emplace();
    data_.emplace(4, 64, DType::bf16, 1e-6, 3, stream_->get());
    data_->restore(stream_->get());
    fused_add_rmsnorm::run(fused_add_rmsnorm::variant("two_pass"), data_->problem(), stream_->get());
    stream_->sync();
    ASSERT_TRUE(data_->verify().ok);
  }
  void poke(void* at, const void* from, std::size_t bytes) {
    SB_CUDA_CHECK(cudaMemcpyAsync(at, from, bytes, cudaMemcpyDefault, stream_->get()));
    stream_->sync();
  }
  std::optional<Stream> stream_;
  std::optional<FusedAddRmsNormData> data_;
};

TEST_F(FusedAddRmsNormVerify, UnwrittenXFails) {
  FusedAddRmsNormData inputs(4, 64, DType::bf16, 1e-6, 3, stream_->get());  // the same seed: x's input values
  const std::size_t at = 2 * (64 * 2 + 5);
  poke(static_cast<char*>(data_->problem().x) + at, static_cast<const char*>(inputs.problem().x) + at, 2);
  const Check c = data_->verify();
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("x row 2 col 5"), std::string::npos) << c.message;
}

TEST_F(FusedAddRmsNormVerify, ResidualOneUlpOffFails) {
  unsigned short v = 0;
  char* at = static_cast<char*>(data_->problem().residual) + 2 * (64 * 1 + 3);
  poke(&v, at, 2);
  v ^= 1;  // the last significand bit of a bf16
  poke(at, &v, 2);
  const Check c = data_->verify();
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("residual row 1 col 3"), std::string::npos) << c.message;
}

TEST_F(FusedAddRmsNormVerify, WritePastTheEndFails) {
  const unsigned char zero = 0;
  poke(static_cast<char*>(data_->problem().residual) + 4 * 64 * 2 + 10, &zero, 1);
  const Check c = data_->verify();
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("past the end of residual"), std::string::npos) << c.message;
}

}  // namespace
}  // namespace sb::bench
