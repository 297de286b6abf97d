// GPU tests of every RMSNorm variant (from the registry) x dtype against the fp64 reference, with the
// tolerance of bench/rmsnorm_case.h (a few ulps of the output dtype), NaN-poisoned outputs, tails and
// odd sizes, the "edge" shape set (rows of up to 2^20 elements), large magnitudes, eps, and non-finite inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <stdexcept>

#include "common/check.h"
#include "common/device.h"
#include "gpu.h"
#include "pdl_probe.h"
#include "rmsnorm/rmsnorm.h"
#include "rmsnorm_case.h"
#include "rmsnorm_shapes.h"

namespace sb::bench {
namespace {

struct Shape {
  int64_t rows, hidden;
};

// 1 row; odd hidden sizes (scalar tails); model sizes; the largest register-resident row (65536 16-bit);
// many rows (several rows per block, partial last block); vectorized's decode kernel with one warp of 1, 2
// or 4 vectors a lane, partial rows over 8 or 16 warps, full ones at 256 rows, and 257 rows (bandwidth);
// 301 rows of 16384 (the bandwidth regime's longest 16-bit rows, 32 KB, in an odd number of rows); rows of
// 8-16 KB in the bandwidth regime (4 vectors a thread, w in registers: 16-bit 6000, 750 vectors over 256
// threads, and 8192, full; fp32 4096 at 257 rows). On an H200 (132 SMs) vectorized's decode kernel splits a
// row over 4 blocks at 1 x 4096 and 7 x 4096, and over 2 at 64 x 8192 and 40 x 1024 (one warp of 4 vectors
// a lane in 16-bit, two in fp32): vectorized_blocks_per_row. 2 x 24576: the latency regime stages a 48 KB
// 16-bit w, which with the kernel's own shared arrays needs the opt-in past 48 KB (2 x 32768 stages 64 KB).
const Shape kShapes[] = {{1, 1},      {1, 7},     {3, 127},   {5, 769},    {2, 5125},    {1, 4096},
                         {7, 4096},   {2, 32768}, {1, 65536}, {2, 65537}, {1000, 768}, {4099, 1024}, {8193, 128},
                         {2, 256},    {3, 392},   {5, 6000},  {256, 8192}, {257, 4096}, {301, 16384},
                         {300, 6000}, {260, 8192}, {64, 8192}, {40, 1024}, {2, 24576}};

using Param = std::tuple<std::string, DType, Shape>;

std::vector<std::string> variant_names() {
  std::vector<std::string> n;
  for (const auto& v : rmsnorm::variants()) n.push_back(v.name);
  return n;
}

class RmsNormGpu : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    SB_REQUIRE_GPU();
    stream_.emplace();
  }
  static const rmsnorm::Variant& var() { return rmsnorm::variant(std::get<0>(GetParam())); }
  static DType dtype() { return std::get<1>(GetParam()); }

  // Runs the variant on `data` (poisoned first) and verifies it.
  static Check run_and_verify(RmsNormData& data, cudaStream_t s) {
    data.poison_output();
    rmsnorm::run(var(), data.problem(), s);
    SB_CUDA_CHECK(cudaStreamSynchronize(s));
    return data.verify();
  }
  Stream& stream() { return *stream_; }
  std::optional<Stream> stream_;  // created once a GPU is known to be there
};

TEST_P(RmsNormGpu, MatchesFp64Reference) {
  const Shape sh = std::get<2>(GetParam());
  RmsNormData data(sh.rows, sh.hidden, dtype(), 1e-6, 1234 + sh.rows * 31 + sh.hidden, stream().get());
  if (const std::string why = var().supports(data.problem()); !why.empty()) {
    // A refused problem is an error from rmsnorm::run, never a launch.
    EXPECT_THROW(rmsnorm::run(var(), data.problem(), stream().get()), std::invalid_argument);
    GTEST_SKIP() << why;
  }
  const Check c = run_and_verify(data, stream().get());
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_LE(c.err, 1.0);
}

// The same inputs give the same bits on every run (no atomics, no order that depends on timing).
TEST_P(RmsNormGpu, RepeatedRunsAreBitIdentical) {
  const Shape sh = std::get<2>(GetParam());
  if (sh.rows * sh.hidden > (1 << 20)) GTEST_SKIP() << "covered by the smaller shapes";
  RmsNormData data(sh.rows, sh.hidden, dtype(), 1e-6, 99, stream().get());
  const rmsnorm::Problem p = data.problem();
  const std::size_t bytes = sh.rows * sh.hidden * size_bytes(dtype());
  std::vector<unsigned char> first(bytes), again(bytes);
  for (auto* out : {&first, &again}) {
    data.poison_output();
    rmsnorm::run(var(), p, stream().get());
    SB_CUDA_CHECK(cudaMemcpyAsync(out->data(), p.y, bytes, cudaMemcpyDeviceToHost, stream().get()));
    stream().sync();
  }
  EXPECT_EQ(first, again);
}

std::string param_name(const ::testing::TestParamInfo<Param>& i) {
  const Shape s = std::get<2>(i.param);
  return std::get<0>(i.param) + "_" + std::string(name(std::get<1>(i.param))) + "_t" + std::to_string(s.rows) + "_h" +
         std::to_string(s.hidden);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, RmsNormGpu,
                         ::testing::Combine(::testing::ValuesIn(variant_names()), ::testing::ValuesIn(kAllDTypes),
                                            ::testing::ValuesIn(kShapes)),
                         param_name);

// bench_rmsnorm's "edge" set (bench/rmsnorm_shapes.cpp: the classes of the peers' test suites) in every variant
// and dtype: each case verifies or is skipped with its variant's supports() reason.
std::vector<Shape> edge_shapes() {
  std::vector<Shape> s;
  for (const RmsNormShape& e : rmsnorm_shape_set("edge")) s.push_back({e.rows, e.hidden});
  return s;
}

INSTANTIATE_TEST_SUITE_P(Edge, RmsNormGpu,
                         ::testing::Combine(::testing::ValuesIn(variant_names()), ::testing::ValuesIn(kAllDTypes),
                                            ::testing::ValuesIn(edge_shapes())),
                         param_name);

class RmsNormGpuSpecial : public ::testing::TestWithParam<std::tuple<std::string, DType>> {
 protected:
  void SetUp() override {
    SB_REQUIRE_GPU();
    stream_.emplace();
  }
  const rmsnorm::Variant& var() const { return rmsnorm::variant(std::get<0>(GetParam())); }
  DType dtype() const { return std::get<1>(GetParam()); }
  Check run(RmsNormData& d) {
    d.poison_output();
    rmsnorm::run(var(), d.problem(), stream().get());
    stream().sync();
    return d.verify();
  }
  Stream& stream() { return *stream_; }
  std::optional<Stream> stream_;
};

// fp16 inputs near its largest finite value: x^2 (3.6e9) overflows fp16 but not the fp32 accumulator.
TEST_P(RmsNormGpuSpecial, LargeMagnitudesDoNotOverflow) {
  const int64_t rows = 3, hidden = 4096;
  RmsNormData d(rows, hidden, dtype(), 1e-6, 7, stream().get());
  std::vector<float> x(rows * hidden);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = (i % 3 ? 60000.0f : -59000.0f) + static_cast<float>(i % 17);
  d.set_x(x);
  const Check c = run(d);
  EXPECT_TRUE(c.ok) << c.message;
}

// eps dominates when the row's mean square is tiny: two eps give two different, both correct, outputs.
TEST_P(RmsNormGpuSpecial, EpsIsHonoured) {
  const int64_t rows = 2, hidden = 1024;
  std::vector<float> x(rows * hidden);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1e-3f * static_cast<float>(static_cast<int>(i % 7) - 3);
  std::vector<unsigned char> out[2];
  const double eps_values[2] = {1e-6, 1e-2};
  for (int k = 0; k < 2; ++k) {
    RmsNormData d(rows, hidden, dtype(), eps_values[k], 11, stream().get());
    d.set_x(x);
    const Check c = run(d);
    EXPECT_TRUE(c.ok) << "eps " << eps_values[k] << ": " << c.message;
    out[k].resize(rows * hidden * size_bytes(dtype()));
    SB_CUDA_CHECK(cudaMemcpyAsync(out[k].data(), d.problem().y, out[k].size(), cudaMemcpyDeviceToHost, stream().get()));
    stream().sync();
  }
  EXPECT_NE(out[0], out[1]) << "eps had no effect";
}

// An Inf or NaN in one row makes that row non-finite (as in the fp64 reference) and no other row.
TEST_P(RmsNormGpuSpecial, NonFiniteInputPoisonsOnlyItsRow) {
  const int64_t rows = 6, hidden = 1000;
  RmsNormData d(rows, hidden, dtype(), 1e-6, 5, stream().get());
  std::vector<float> x(rows * hidden);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) + 0.1f;
  x[1 * hidden + 500] = std::numeric_limits<float>::infinity();
  x[4 * hidden + 3] = std::numeric_limits<float>::quiet_NaN();
  d.set_x(x);
  const Check c = run(d);  // the reference has NaN in rows 1 and 4 only; verify() requires the same
  EXPECT_TRUE(c.ok) << c.message;
}

// The kernel ahead in the stream is waited for before x is read: `vectorized`'s decode-sized kernel is
// launched with programmatic dependent launch (common/pdl.cuh) and may start while that kernel runs. Here
// the kernel ahead lets its dependent start at once, then spins ~0.5 ms before it restores x (negated
// beforehand): a kernel that read x before that grid ended would normalize -x, and verify() fails. The
// variant runs once first, so that its kernel is loaded (CUDA loads modules lazily, on first launch) and
// its launch reaches the GPU well within the spin.
TEST_P(RmsNormGpuSpecial, WaitsForTheKernelAheadThatWritesX) {
  constexpr long long kSpinCycles = 1000000;
  for (const Shape sh : {Shape{1, 4096}, Shape{64, 8192}, Shape{256, 4096}}) {
    RmsNormData d(sh.rows, sh.hidden, dtype(), 1e-6, 17, stream().get());
    const rmsnorm::Problem p = d.problem();
    if (const std::string why = var().supports(p); !why.empty()) GTEST_SKIP() << why;
    rmsnorm::run(var(), p, stream().get());
    stream().sync();
    void* x = const_cast<void*>(p.x);
    const int elem = static_cast<int>(size_bytes(dtype()));
    test::negate_after_spin(x, sh.rows * sh.hidden, elem, 0, stream().get());
    d.poison_output();
    test::negate_after_spin(x, sh.rows * sh.hidden, elem, kSpinCycles, stream().get());
    rmsnorm::run(var(), p, stream().get());
    stream().sync();
    const Check c = d.verify();
    EXPECT_TRUE(c.ok) << sh.rows << " x " << sh.hidden << ": " << c.message;
  }
}

// vectorized's decode kernel splits a row over 2 or 4 blocks when rows leave SMs spare; each block sums the
// whole row's squares in the order of one block a row, so a row's output is the same bits split or not. The
// rows of a problem are independent, so the first rows of one x give, as problems of sm/4 rows (4 blocks a
// row), sm/2 rows (2) and sm/2 + 1 rows (1), the same bytes.
TEST(RmsNormVectorizedSplit, ASplitRowIsTheSameBitsAsOneBlockARow) {
  SB_REQUIRE_GPU();
  Stream s;
  const int sms = device_sm_count();
  const int64_t by[3] = {sms / 4, sms / 2, sms / 2 + 1};  // rows for 4, 2 and 1 blocks a row
  const int expect_split[3] = {4, 2, 1};
  for (DType t : kAllDTypes)
    for (int64_t hidden : {1024, 4096, 8192}) {
      SCOPED_TRACE(std::string(name(t)) + " hidden " + std::to_string(hidden));
      RmsNormData d(by[2], hidden, t, 1e-6, 21, s.get());
      const rmsnorm::VectorizedConfig c = rmsnorm::vectorized_config(by[2], hidden, t);
      ASSERT_EQ(c.regime, rmsnorm::VectorizedRegime::decode);
      const std::size_t row_bytes = hidden * size_bytes(t);
      std::vector<unsigned char> out[3];
      for (int k = 0; k < 3; ++k) {
        ASSERT_EQ(rmsnorm::vectorized_blocks_per_row(c, by[k], hidden, sms), expect_split[k]) << by[k] << " rows";
        rmsnorm::Problem p = d.problem();
        p.rows = by[k];
        d.poison_output();
        rmsnorm::run(rmsnorm::variant("vectorized"), p, s.get());
        out[k].resize(by[0] * row_bytes);
        SB_CUDA_CHECK(cudaMemcpyAsync(out[k].data(), p.y, out[k].size(), cudaMemcpyDeviceToHost, s.get()));
        s.sync();
      }
      EXPECT_EQ(out[0], out[2]) << "4 blocks a row against 1";
      EXPECT_EQ(out[1], out[2]) << "2 blocks a row against 1";
      const Check c1 = d.verify();  // the last run: all rows, one block a row
      EXPECT_TRUE(c1.ok) << c1.message;
    }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, RmsNormGpuSpecial,
                         ::testing::Combine(::testing::ValuesIn(variant_names()), ::testing::ValuesIn(kAllDTypes)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, DType>>& i) {
                           return std::get<0>(i.param) + "_" + std::string(name(std::get<1>(i.param)));
                         });

// A kernel that skips an element must fail verification: the NaN poison is what catches it.
TEST(RmsNormVerify, UnwrittenOutputFails) {
  SB_REQUIRE_GPU();
  Stream s;
  RmsNormData d(4, 64, DType::bf16, 1e-6, 3, s.get());
  rmsnorm::run(rmsnorm::variant("naive"), d.problem(), s.get());
  s.sync();
  ASSERT_TRUE(d.verify().ok);
  // Re-poison one element only (0xffff is a bf16 NaN).
  SB_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(d.problem().y) + 2 * (64 * 2 + 5), 0xff, 2, s.get()));
  s.sync();
  const Check c = d.verify();
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("row 2 col 5"), std::string::npos) << c.message;
}

// A wrong value by more than the tolerance fails; the error is reported relative to the tolerance.
TEST(RmsNormVerify, WrongValueFails) {
  SB_REQUIRE_GPU();
  Stream s;
  RmsNormData d(2, 32, DType::f32, 1e-6, 3, s.get());
  rmsnorm::run(rmsnorm::variant("naive"), d.problem(), s.get());
  s.sync();
  float v = 0;
  float* y = static_cast<float*>(d.problem().y);
  SB_CUDA_CHECK(cudaMemcpyAsync(&v, y + 40, 4, cudaMemcpyDeviceToHost, s.get()));
  s.sync();
  v *= 1.0f + 1e-4f;  // far beyond a few fp32 ulps
  SB_CUDA_CHECK(cudaMemcpyAsync(y + 40, &v, 4, cudaMemcpyHostToDevice, s.get()));
  s.sync();
  const Check c = d.verify();
  EXPECT_FALSE(c.ok);
  EXPECT_GT(c.err, 1.0);
}

}  // namespace
}  // namespace sb::bench
