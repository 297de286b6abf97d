// CPU tests of fused residual-add + RMSNorm: the problem's byte/FLOP formulas and validation, the registry and
// best_variant, and the fp64 reference (rounding to the dtype, then RMSNorm of the rounded sum). run() validates
// before it touches the GPU, so bad problems are testable here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "expect.h"
#include "fused_add_rmsnorm/fused_add_rmsnorm.h"
#include "ref/cpu/fused_add_rmsnorm_ref.h"
#include "ref/cpu/rmsnorm_ref.h"
#include "rmsnorm_shapes.h"

namespace sb::fused_add_rmsnorm {
namespace {

// Addresses that are never dereferenced (validation and supports() only look at them), 1 GiB apart and
// 256-byte aligned, so that even the largest problems here do not overlap.
void* fake(unsigned k) { return reinterpret_cast<void*>(std::uintptr_t{0x100000000} + (std::uintptr_t{k} << 30)); }

Problem valid() {
  Problem p;
  p.rows = 4;
  p.hidden = 8;
  p.dtype = DType::bf16;
  p.x = fake(0);
  p.residual = fake(1);
  p.w = fake(2);
  return p;
}

void expect_invalid(const Problem& p, const std::string& field) {
  test::expect_throw_naming<std::invalid_argument>([&] { p.validate(); }, field);
  test::expect_throw_naming<std::invalid_argument>([&] { best_variant(p); }, field);
  for (const Variant& v : variants()) EXPECT_THROW(run(v, p, nullptr), std::invalid_argument) << v.name;
}

TEST(FusedAddRmsNormProblem, BytesAndFlops) {
  Problem p = valid();
  p.rows = 4096;
  p.hidden = 8192;
  // Read x, residual and w; write residual and x: the residual's read and write both count.
  EXPECT_EQ(p.bytes(), (4u * 4096 * 8192 + 8192) * 2);
  p.dtype = DType::f32;
  EXPECT_EQ(p.bytes(), (4u * 4096 * 8192 + 8192) * 4);
  p.rows = 1;
  p.hidden = 7;
  p.dtype = DType::f16;
  EXPECT_EQ(p.bytes(), (4u * 7 + 7) * 2);
  EXPECT_DOUBLE_EQ(p.flops(), 5.0 * 7);  // the add, the square, the sum, *rstd, *w
}

TEST(FusedAddRmsNormProblem, BadProblemsNameTheField) {
  EXPECT_NO_THROW(valid().validate());
  using Mutate = void (*)(Problem&);
  const std::pair<Mutate, const char*> kBad[] = {
      {[](Problem& p) { p.rows = 0; }, "rows"},
      {[](Problem& p) { p.hidden = -3; }, "hidden"},
      {[](Problem& p) { p.hidden = (int64_t{1} << 30) + 1; }, "hidden"},
      {[](Problem& p) { p.eps = -1e-6; }, "eps"},
      {[](Problem& p) { p.eps = std::numeric_limits<double>::infinity(); }, "eps"},
      {[](Problem& p) { p.dtype = static_cast<DType>(7); }, "dtype"},
      {[](Problem& p) { p.x = nullptr; }, "x is null"},
      {[](Problem& p) { p.residual = nullptr; }, "residual is null"},
      {[](Problem& p) { p.w = nullptr; }, "w is null"},
  };
  for (const auto& [mutate, field] : kBad) {
    SCOPED_TRACE(field);
    Problem p = valid();
    mutate(p);
    expect_invalid(p, field);
  }
}

// In place, each element by the thread that read it: x and residual must be distinct, w apart from both.
TEST(FusedAddRmsNormProblem, AliasingIsAnError) {
  Problem p = valid();  // 4 x 8 bf16: 64 bytes a tensor, 16 bytes of w
  p.residual = p.x;
  expect_invalid(p, "x and residual overlap");
  p.residual = static_cast<char*>(p.x) + 62;  // the last element of x is residual's first
  expect_invalid(p, "x and residual overlap");
  p.residual = static_cast<char*>(p.x) + 64;  // adjacent, not overlapping
  EXPECT_NO_THROW(p.validate());
  p.x = static_cast<char*>(p.residual) + 64;  // residual before x, adjacent
  EXPECT_NO_THROW(p.validate());
  p = valid();
  p.w = static_cast<char*>(p.x) + 48;
  expect_invalid(p, "w overlaps x");
  p = valid();
  p.w = static_cast<char*>(p.residual) - 8;  // w's last 8 bytes are residual's first
  expect_invalid(p, "w overlaps residual");
  p.w = static_cast<char*>(p.residual) - 16;
  EXPECT_NO_THROW(p.validate());
}

// The registry is the X-macro expansion of variants.def: same names, same order, nothing else.
TEST(FusedAddRmsNormRegistry, MatchesVariantsDefInOrder) {
  const std::vector<std::string> names = test::variants_def_names(SOLBENCH_SOURCE_DIR "/kernels/fused_add_rmsnorm/variants.def");
  ASSERT_EQ(names.size(), variants().size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(names[i], variants()[i].name);
    EXPECT_GT(std::string(variants()[i].summary).size(), 10u);
    EXPECT_EQ(&variant(names[i]), &variants()[i]);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"two_pass", "vectorized"}));
  test::expect_throw_naming<std::invalid_argument>([] { variant("fastest"); },
                                                   "fused_add_rmsnorm: unknown variant 'fastest' (known: two_pass, vectorized)");
}

// vectorized where every pointer is aligned to its accesses (16 bytes, or the element for hidden sizes that
// are not a multiple of 16 bytes), else two_pass, which takes any valid problem.
TEST(FusedAddRmsNormBestVariant, VectorizedElseTwoPass) {
  Problem p = valid();
  p.rows = 4096;
  p.hidden = 4096;
  EXPECT_STREQ(best_variant(p).name, "vectorized");
  for (void* Problem::*field : {&Problem::x, &Problem::residual}) {
    Problem q = p;
    q.*field = static_cast<char*>(q.*field) + 2;
    const std::string why = variant("vectorized").supports(q);
    EXPECT_NE(why.find("is not 16-byte aligned"), std::string::npos) << why;
    EXPECT_THROW(run(variant("vectorized"), q, nullptr), std::invalid_argument);
    EXPECT_STREQ(best_variant(q).name, "two_pass");
  }
  p.w = static_cast<const char*>(p.w) + 8;
  EXPECT_NE(variant("vectorized").supports(p).find("w is not 16-byte aligned"), std::string::npos);
  EXPECT_STREQ(best_variant(p).name, "two_pass");
  p = valid();
  p.hidden = 769;  // element accesses: 2-byte alignment is enough
  p.x = static_cast<char*>(p.x) + 2;
  EXPECT_STREQ(best_variant(p).name, "vectorized");
  p.rows = int64_t{1} << 33;  // more rows than one grid holds: two_pass loops over them
  EXPECT_EQ(variant("two_pass").supports(p), "");
}

// The auto-dispatch has a path for every shape of bench_rmsnorm's "edge" and "default" sets in every dtype
// (best_variant returns only a variant whose supports() is "", else throws).
TEST(FusedAddRmsNormBestVariant, EveryBenchShapeHasAVariant) {
  for (const char* set : {"edge", "default"})
    for (const bench::RmsNormShape& s : bench::rmsnorm_shape_set(set))
      for (DType t : kAllDTypes)
        EXPECT_NO_THROW(best_variant(Problem{s.rows, s.hidden, 1e-6, t, fake(0), fake(1), fake(2)}))
            << s.name() << " " << name(t);
}

}  // namespace
}  // namespace sb::fused_add_rmsnorm

namespace sb::ref {
namespace {

TEST(RefFusedAddRmsNorm, RoundToDtype) {
  EXPECT_EQ(round_to_dtype(1.0 + 0x1p-9, DType::bf16), 1.0);            // below half an ulp (2^-8 at 1)
  EXPECT_EQ(round_to_dtype(1.0 + 0x1p-8, DType::bf16), 1.0);            // a tie: to even
  EXPECT_EQ(round_to_dtype(1.0 + 3 * 0x1p-8, DType::bf16), 1.0 + 0x1p-6);  // a tie: to even, upwards
  EXPECT_EQ(round_to_dtype(1.0 + 0x1p-11, DType::f16), 1.0);            // a tie at 1 + 2^-11
  EXPECT_EQ(round_to_dtype(2049.0, DType::f16), 2048.0);                // ulp 2 above 2048: a tie, to even
  EXPECT_EQ(round_to_dtype(2051.0, DType::f16), 2052.0);
  EXPECT_EQ(round_to_dtype(65519.0, DType::f16), 65504.0);              // below max + half an ulp
  EXPECT_EQ(round_to_dtype(65520.0, DType::f16), HUGE_VAL);             // the tie at max + half an ulp overflows
  EXPECT_EQ(round_to_dtype(-70000.0, DType::f16), -HUGE_VAL);
  EXPECT_EQ(round_to_dtype(0x1p-25, DType::f16), 0.0);                  // half the smallest subnormal: to even (0)
  EXPECT_EQ(round_to_dtype(3 * 0x1p-25, DType::f16), 0x1p-23);          // 1.5 subnormals: to even (2)
  EXPECT_EQ(round_to_dtype(1.0 + 0x1p-30, DType::f32), 1.0);
  EXPECT_EQ(round_to_dtype(1.0 + 0x1p-23, DType::f32), 1.0 + 0x1p-23);
  EXPECT_EQ(round_to_dtype(0.1, DType::f32), static_cast<double>(0.1f));
  EXPECT_EQ(round_to_dtype(3.0e38 * 2, DType::bf16), HUGE_VAL);
  EXPECT_TRUE(std::isnan(round_to_dtype(std::nan(""), DType::bf16)));
  EXPECT_EQ(round_to_dtype(-0.0, DType::f16), 0.0);
  EXPECT_TRUE(std::signbit(round_to_dtype(-0.0, DType::f16)));
}

// residual = round(x + residual); x = RMSNorm of that rounded sum (not of the exact one).
TEST(RefFusedAddRmsNorm, NormalizesTheRoundedSum) {
  // bf16: 1 + 2^-8 (exact sum 1.00390625) rounds to 1 (a tie, to even); 3 + 1 = 4 exactly.
  const std::vector<double> x = {1.0, 3.0}, r = {0x1p-8, 1.0}, w = {1.0, 2.0};
  std::vector<double> x_out(2), r_out(2);
  fused_add_rmsnorm_row(x.data(), r.data(), w.data(), x_out.data(), r_out.data(), 2, 0.0, DType::bf16);
  EXPECT_EQ(r_out, (std::vector<double>{1.0, 4.0}));
  // rms of (1, 4) = sqrt(17 / 2): x = (1, 4 * 2) / sqrt(8.5).
  test::expect_close(x_out, {1.0 / std::sqrt(8.5), 8.0 / std::sqrt(8.5)});
  std::vector<double> direct(2);
  rmsnorm_row(r_out.data(), w.data(), direct.data(), 2, 0.0);
  EXPECT_EQ(x_out, direct);
}

TEST(RefFusedAddRmsNorm, InPlaceAsTheOp) {
  std::vector<double> x = {0.5, -2.0, 1.25}, r = {1.5, 0.75, -3.0};
  const std::vector<double> w = {1.0, 0.5, 2.0};
  std::vector<double> x_out(3), r_out(3);
  fused_add_rmsnorm_row(x.data(), r.data(), w.data(), x_out.data(), r_out.data(), 3, 1e-6, DType::f32);
  fused_add_rmsnorm_row(x.data(), r.data(), w.data(), x.data(), r.data(), 3, 1e-6, DType::f32);
  EXPECT_EQ(x, x_out);
  EXPECT_EQ(r, r_out);
}

TEST(RefFusedAddRmsNorm, OverflowingSumMakesItsRowNonFinite) {
  const std::vector<double> x = {60000.0, 1.0}, r = {10000.0, 1.0}, w = {1.0, 1.0};
  std::vector<double> x_out(2), r_out(2);
  fused_add_rmsnorm_row(x.data(), r.data(), w.data(), x_out.data(), r_out.data(), 2, 1e-6, DType::f16);
  EXPECT_EQ(r_out[0], HUGE_VAL);  // 70000 overflows fp16
  EXPECT_EQ(r_out[1], 2.0);
  EXPECT_TRUE(std::isnan(x_out[0]));  // Inf / Inf
  EXPECT_EQ(x_out[1], 0.0);           // 2 / Inf
}

TEST(RefFusedAddRmsNorm, BadArgumentsNameTheField) {
  const double v = 1.0;
  double out = 0, out2 = 0;
  test::expect_throw_naming<std::invalid_argument>(
      [&] { fused_add_rmsnorm_row(&v, &v, &v, &out, &out2, 0, 1e-6, DType::f32); }, "hidden");
  test::expect_throw_naming<std::invalid_argument>(
      [&] { fused_add_rmsnorm_row(&v, nullptr, &v, &out, &out2, 1, 1e-6, DType::f32); }, "residual_row");
  test::expect_throw_naming<std::invalid_argument>(
      [&] { fused_add_rmsnorm_row(&v, &v, &v, &out, &out2, 1, -1.0, DType::f32); }, "eps");
}

}  // namespace
}  // namespace sb::ref
