// CPU tests of the RMSNorm backward op: validation messages, byte/FLOP formulas, the workspace bound and the
// variants' partial-row counts, the registry and best_variant, and the fp64 reference against central
// differences of the forward reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "expect.h"
#include "ref/cpu/rmsnorm_backward_ref.h"
#include "ref/cpu/rmsnorm_ref.h"
#include "rmsnorm_backward/rmsnorm_backward.h"

namespace sb::rmsnorm_backward {
namespace {

alignas(16) char fake[6][64];  // never dereferenced: validation or supports() decides first

Problem valid() {
  Problem p;
  p.rows = 4;
  p.hidden = 8;
  p.dtype = DType::bf16;
  p.x = fake[0];
  p.w = fake[1];
  p.dy = fake[2];
  p.dx = fake[3];
  p.dw = fake[4];
  p.workspace = fake[5];
  p.workspace_size = workspace_bytes(p);
  return p;
}

void expect_invalid(const Problem& p, const std::string& field) {
  test::expect_throw_naming<std::invalid_argument>([&] { p.validate(); }, field);
  for (const Variant& v : variants()) EXPECT_THROW(run(v, p, nullptr), std::invalid_argument) << v.name;
  EXPECT_THROW(best_variant(p), std::invalid_argument);
}

TEST(RmsNormBackwardProblem, BadProblemsNameTheField) {
  using Break = void (*)(Problem&);
  const std::pair<Break, const char*> cases[] = {
      {[](Problem& p) { p.rows = 0; }, "rows"},
      {[](Problem& p) { p.hidden = -3; }, "hidden"},
      {[](Problem& p) { p.hidden = (int64_t{1} << 30) + 1; }, "hidden"},
      {[](Problem& p) { p.eps = -1e-6; }, "eps"},
      {[](Problem& p) { p.eps = std::numeric_limits<double>::infinity(); }, "eps"},
      {[](Problem& p) { p.dtype = static_cast<DType>(7); }, "dtype"},
      {[](Problem& p) { p.x = nullptr; }, "x is null"},
      {[](Problem& p) { p.w = nullptr; }, "w is null"},
      {[](Problem& p) { p.dy = nullptr; }, "dy is null"},
      {[](Problem& p) { p.dx = nullptr; }, "dx is null"},
      {[](Problem& p) { p.dw = nullptr; }, "dw is null"},
      {[](Problem& p) { p.workspace = nullptr; }, "workspace is null"},
      {[](Problem& p) { p.workspace = fake[5] + 4; }, "workspace must be 16-byte aligned"},
      {[](Problem& p) { p.workspace_size = workspace_bytes(p) - 1; }, "workspace_size"},
  };
  for (const auto& [breaks, field] : cases) {
    SCOPED_TRACE(field);
    Problem p = valid();
    breaks(p);
    expect_invalid(p, field);
  }
  EXPECT_NO_THROW(valid().validate());
}

TEST(RmsNormBackwardProblem, BytesAndFlops) {
  Problem p = valid();
  p.rows = 4096;
  p.hidden = 8192;
  // read x, dy, w; write dx, dw
  EXPECT_EQ(p.bytes(), (3u * 4096 * 8192 + 2u * 8192) * 2);
  p.dtype = DType::f32;
  EXPECT_EQ(p.bytes(), (3u * 4096 * 8192 + 2u * 8192) * 4);
  EXPECT_DOUBLE_EQ(p.flops(), 11.0 * 4096 * 8192);
  static const float saved[1] = {};
  p.rstd = saved;  // the saved rstd is read (4 bytes a row) and x*x and its sum are not computed
  EXPECT_EQ(p.bytes(), (3u * 4096 * 8192 + 2u * 8192) * 4 + 4u * 4096);
  EXPECT_DOUBLE_EQ(p.flops(), 9.0 * 4096 * 8192);
}

TEST(RmsNormBackwardProblem, WorkspaceHoldsEveryVariantsPartialRows) {
  Problem p = valid();
  for (int64_t rows : {int64_t{1}, int64_t{31}, int64_t{1024}, int64_t{1025}, int64_t{65536}, int64_t{100000},
                       int64_t{0x7fffffff}}) {
    p.rows = rows;
    p.hidden = 4096;
    EXPECT_EQ(workspace_bytes(p), static_cast<std::size_t>(std::min(rows, kMaxPartialRows)) * 4096 * 4) << rows;
    // two_kernel: a block per chunk, one partial row a block.
    const int64_t chunk = two_kernel_chunk_rows(rows);
    EXPECT_GE(chunk, 32);
    EXPECT_EQ(chunk % 32, 0);
    EXPECT_LE((rows + chunk - 1) / chunk, std::min(rows, kMaxPartialRows)) << rows;
  }
  EXPECT_EQ(two_kernel_chunk_rows(65536), 64);
  EXPECT_EQ(two_kernel_chunk_rows(1), 32);
}

TEST(RmsNormBackwardProblem, PersistentConfigHoldsTheRow) {
  struct Case {
    int64_t hidden;
    DType t;
    int vec, vectors_per_thread, block_threads;
  };
  const Case cases[] = {
      {1, DType::bf16, 1, 1, 32},       {7, DType::f32, 1, 1, 32},       {769, DType::f16, 1, 2, 416},
      {4096, DType::bf16, 8, 1, 512},   {8192, DType::bf16, 8, 2, 512},  {16384, DType::bf16, 8, 4, 512},
      {8192, DType::f32, 4, 4, 512},    {4096, DType::f32, 4, 2, 512},   {4095, DType::bf16, 1, 8, 512},
      {768, DType::f32, 4, 1, 192},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.hidden) + " " + std::string(name(c.t)));
    const PersistentConfig got = persistent_config(c.hidden, c.t);
    EXPECT_EQ(got.vec, c.vec);
    EXPECT_EQ(got.vectors_per_thread, c.vectors_per_thread);
    EXPECT_EQ(got.block_threads, c.block_threads);
    EXPECT_GE(int64_t{got.block_threads} * got.vectors_per_thread * got.vec, c.hidden);
  }
  // Past one block's registers: a reason from persistent, and two_kernel runs it.
  for (auto [hidden, t] : {std::pair{int64_t{16392}, DType::bf16}, {int64_t{8196}, DType::f32},
                           {int64_t{5123}, DType::f16}, {int64_t{262144}, DType::bf16}}) {
    EXPECT_EQ(persistent_config(hidden, t).vectors_per_thread, 0) << hidden;
    Problem p = valid();
    p.hidden = hidden;
    p.dtype = t;
    p.workspace_size = workspace_bytes(p);
    EXPECT_NE(variant("persistent").supports(p).find("does not fit"), std::string::npos);
    EXPECT_STREQ(best_variant(p).name, "two_kernel");
  }
}

TEST(RmsNormBackwardRegistry, VariantsInTeachingOrder) {
  ASSERT_GE(variants().size(), 2u);
  EXPECT_STREQ(variants()[0].name, "two_kernel");
  EXPECT_STREQ(variants()[1].name, "persistent");
  for (const Variant& v : variants()) {
    EXPECT_EQ(&variant(v.name), &v);
    EXPECT_NE(std::string(v.summary), "");
  }
  test::expect_throw_naming<std::invalid_argument>([] { variant("nope"); }, "known: two_kernel, persistent");
  EXPECT_STREQ(best_variant(valid()).name, "persistent");
  Problem p = valid();
  p.dx = fake[3] + 2;  // 2-byte aligned: persistent's 16-byte accesses refuse, two_kernel's scalar ones run
  EXPECT_NE(variant("persistent").supports(p).find("dx is not 16-byte aligned"), std::string::npos);
  EXPECT_STREQ(best_variant(p).name, "two_kernel");
}

// The reference's dx and dw are the gradients of sum(y * dy) with y the forward reference: central
// differences of the fp64 forward agree to ~1e-9 (step 1e-5, error O(h^2)).
TEST(RmsNormBackwardReference, MatchesCentralDifferencesOfTheForward) {
  const int64_t rows = 3, hidden = 7;
  const double eps = 1e-3;
  std::vector<double> x(rows * hidden), w(hidden), dy(rows * hidden);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = std::sin(1.3 * static_cast<double>(i) + 0.2);
    dy[i] = std::cos(0.7 * static_cast<double>(i)) - 0.3;
  }
  for (int64_t i = 0; i < hidden; ++i) w[i] = 1.0 + 0.25 * std::sin(static_cast<double>(i));
  auto loss = [&](const std::vector<double>& xs, const std::vector<double>& ws) {
    std::vector<double> y(rows * hidden);
    ref::rmsnorm(xs.data(), ws.data(), y.data(), rows, hidden, eps);
    double l = 0.0;
    for (std::size_t i = 0; i < y.size(); ++i) l += y[i] * dy[i];
    return l;
  };
  std::vector<double> dx(rows * hidden), dw(hidden);
  ref::rmsnorm_backward(x.data(), w.data(), dy.data(), dx.data(), dw.data(), rows, hidden, eps);
  const double h = 1e-5;
  std::vector<double> num_dx(x.size()), num_dw(w.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::vector<double> a = x, b = x;
    a[i] += h;
    b[i] -= h;
    num_dx[i] = (loss(a, w) - loss(b, w)) / (2 * h);
  }
  for (std::size_t i = 0; i < w.size(); ++i) {
    std::vector<double> a = w, b = w;
    a[i] += h;
    b[i] -= h;
    num_dw[i] = (loss(x, a) - loss(x, b)) / (2 * h);
  }
  test::expect_close(dx, num_dx, 1e-8);
  test::expect_close(dw, num_dw, 1e-8);
}

// The per-row form accumulates dw and its magnitude over calls, as the GPU verification streams rows.
TEST(RmsNormBackwardReference, RowFormAccumulatesDw) {
  const int64_t rows = 4, hidden = 5;
  std::vector<double> x(rows * hidden), w(hidden, 0.5), dy(rows * hidden), dx(rows * hidden), dw(hidden);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<double>(i % 7) - 3.0;
    dy[i] = static_cast<double>(i % 3) - 1.0;
  }
  ref::rmsnorm_backward(x.data(), w.data(), dy.data(), dx.data(), dw.data(), rows, hidden, 1e-6);
  std::vector<double> sum(hidden, 0.0), abs(hidden, 0.0), row_dx(hidden), scale(hidden);
  for (int64_t r = 0; r < rows; ++r) {
    ref::rmsnorm_backward_row(x.data() + r * hidden, w.data(), dy.data() + r * hidden, hidden, 1e-6,
                              {row_dx.data(), sum.data(), abs.data(), scale.data()});
    for (int64_t i = 0; i < hidden; ++i) {
      EXPECT_DOUBLE_EQ(row_dx[i], dx[r * hidden + i]);
      EXPECT_GE(scale[i], std::fabs(row_dx[i]) * (1 - 1e-12));  // the terms bound their difference
    }
  }
  for (int64_t i = 0; i < hidden; ++i) {
    EXPECT_DOUBLE_EQ(sum[i], dw[i]);
    EXPECT_GE(abs[i], std::fabs(dw[i]));
  }
  test::expect_throw_naming<std::invalid_argument>(
      [&] { ref::rmsnorm_backward(x.data(), w.data(), nullptr, dx.data(), dw.data(), rows, hidden, 1e-6); }, "dy");
  test::expect_throw_naming<std::invalid_argument>(
      [&] { ref::rmsnorm_backward(x.data(), w.data(), dy.data(), dx.data(), dw.data(), 0, hidden, 1e-6); }, "rows");
}

}  // namespace
}  // namespace sb::rmsnorm_backward
