// Tests of the fp64 RMSNorm reference against values derived by hand (derivations in the comments).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "expect.h"
#include "ref/cpu/rmsnorm_ref.h"

namespace {

using sb::ref::rmsnorm;
using sb::ref::rmsnorm_row;

using sb::test::expect_close;

template <typename F>
void expect_invalid(F call, const std::string& field) {
  sb::test::expect_throw_naming<std::invalid_argument>(call, field);
}

TEST(RefRmsNorm, TwoElementsByHand) {
  // mean(3^2, 4^2) = 12.5, rms = sqrt(12.5) = 5 / sqrt(2):
  // y = [3 * sqrt(2) / 5 * 1, 4 * sqrt(2) / 5 * 2] = [0.848528137423857, 2.262741699796952].
  const std::vector<double> x = {3, 4}, w = {1, 2};
  std::vector<double> y(2);
  rmsnorm(x.data(), w.data(), y.data(), 1, 2, 0.0);
  expect_close(y, {0.848528137423857, 2.262741699796952});
  expect_close(y, {3 * std::sqrt(2.0) / 5, 8 * std::sqrt(2.0) / 5});
}

TEST(RefRmsNorm, SingleElementRow) {
  // hidden = 1: rms = |x|, so y = sign(x) * w exactly: -7 / 7 * 0.5 = -0.5.
  const double x = -7, w = 0.5;
  double y = 0;
  rmsnorm(&x, &w, &y, 1, 1, 0.0);
  EXPECT_EQ(y, -0.5);
}

TEST(RefRmsNorm, EpsIsHonoured) {
  // x = [1, 1]: mean square 1. eps = 0 -> rms 1 -> y = [1, 1]; eps = 3 -> rms sqrt(4) = 2 -> y = [0.5, 0.5].
  const std::vector<double> x = {1, 1}, w = {1, 1};
  std::vector<double> y(2);
  rmsnorm(x.data(), w.data(), y.data(), 1, 2, 0.0);
  EXPECT_EQ(y, (std::vector<double>{1, 1}));
  rmsnorm(x.data(), w.data(), y.data(), 1, 2, 3.0);
  EXPECT_EQ(y, (std::vector<double>{0.5, 0.5}));
}

TEST(RefRmsNorm, RowsUseTheirOwnRmsAndSharedWeights) {
  // eps = 1, w = [2, -1, 0.5]. Row 0 [1, 2, 2]: (1 + 4 + 4) / 3 + 1 = 4, rms 2 -> [1, -1, 0.5].
  // Row 1 [0, 0, 3]: 9 / 3 + 1 = 4, rms 2 -> [0, 0, 0.75]. All values exact in binary.
  const std::vector<double> x = {1, 2, 2, 0, 0, 3}, w = {2, -1, 0.5};
  std::vector<double> y(6);
  rmsnorm(x.data(), w.data(), y.data(), 2, 3, 1.0);
  EXPECT_EQ(y, (std::vector<double>{1, -1, 0.5, 0, 0, 0.75}));

  std::vector<double> y_row(3);
  rmsnorm_row(x.data() + 3, w.data(), y_row.data(), 3, 1.0);
  EXPECT_EQ(y_row, (std::vector<double>{0, 0, 0.75}));
}

TEST(RefRmsNorm, NonFiniteStaysInItsRow) {
  // Rows 0 and 2 are [1, 2, 2] with eps = 1 -> [0.5, 1, 1] (see above, w = 1). Row 1 holds a NaN or an Inf.
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> w = {1, 1, 1};
  for (double bad : {nan, inf, -inf}) {
    const std::vector<double> x = {1, 2, 2, 1, bad, 1, 1, 2, 2};
    std::vector<double> y(9);
    rmsnorm(x.data(), w.data(), y.data(), 3, 3, 1.0);
    EXPECT_EQ(std::vector<double>(y.begin(), y.begin() + 3), (std::vector<double>{0.5, 1, 1})) << bad;
    EXPECT_EQ(std::vector<double>(y.begin() + 6, y.end()), (std::vector<double>{0.5, 1, 1})) << bad;
    // NaN: the sum is NaN, every element NaN. Inf: rms = Inf, finite / Inf = 0 but Inf / Inf = NaN.
    EXPECT_TRUE(std::isnan(y[4])) << bad;
    if (std::isnan(bad)) {
      for (int i = 3; i < 6; ++i) EXPECT_TRUE(std::isnan(y[i])) << i;
    }
  }
}

TEST(RefRmsNorm, LargeMagnitudesDoNotOverflow) {
  // fp16's max is 65504: [60000, -60000, 60000, 60000] has rms 60000 -> [1, -1, 1, 1] exactly.
  const std::vector<double> x = {60000, -60000, 60000, 60000}, w = {1, 1, 1, 1};
  std::vector<double> y(4);
  rmsnorm(x.data(), w.data(), y.data(), 1, 4, 1e-6);
  expect_close(y, {1, -1, 1, 1});
  // Near fp32's max (3.4e38): x^2 = 9e76 is still far inside double's range -> [1, -1].
  const std::vector<double> x32 = {3e38, -3e38};
  std::vector<double> y32(2);
  rmsnorm(x32.data(), w.data(), y32.data(), 1, 2, 1e-6);
  expect_close(y32, {1, -1});
}

TEST(RefRmsNorm, InvalidArgumentsNameTheField) {
  // Pointer fields are one letter, so match "<field> must" to be sure the message names that field.
  const std::vector<double> x = {1, 2}, w = {1, 1};
  std::vector<double> y(2);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  expect_invalid([&] { rmsnorm(x.data(), w.data(), y.data(), 0, 2, 0.0); }, "rows");
  expect_invalid([&] { rmsnorm(x.data(), w.data(), y.data(), -1, 2, 0.0); }, "rows");
  expect_invalid([&] { rmsnorm(x.data(), w.data(), y.data(), 1, 0, 0.0); }, "hidden");
  expect_invalid([&] { rmsnorm(x.data(), w.data(), y.data(), 1, -2, 0.0); }, "hidden");
  for (double eps : {-1e-9, nan, inf})
    expect_invalid([&] { rmsnorm(x.data(), w.data(), y.data(), 1, 2, eps); }, "eps");
  expect_invalid([&] { rmsnorm(nullptr, w.data(), y.data(), 1, 2, 0.0); }, "x must");
  expect_invalid([&] { rmsnorm(x.data(), nullptr, y.data(), 1, 2, 0.0); }, "w must");
  expect_invalid([&] { rmsnorm(x.data(), w.data(), nullptr, 1, 2, 0.0); }, "y must");
  expect_invalid([&] { rmsnorm_row(nullptr, w.data(), y.data(), 2, 0.0); }, "x_row");
  expect_invalid([&] { rmsnorm_row(x.data(), w.data(), nullptr, 2, 0.0); }, "y_row");
  expect_invalid([&] { rmsnorm_row(x.data(), w.data(), y.data(), 0, 0.0); }, "hidden");
  expect_invalid([&] { rmsnorm_row(x.data(), w.data(), y.data(), 2, -1.0); }, "eps");
}

}  // namespace
