#include "ref/cpu/fused_add_rmsnorm_ref.h"

#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>

#include "ref/cpu/rmsnorm_ref.h"

namespace sb::ref {

double round_to_dtype(double v, DType t) {
  if (!std::isfinite(v) || v == 0.0) return v;
  // Significand bits, the exponent of the smallest subnormal, the largest finite value.
  int bits = 24, min_exp = -149;
  double max_finite = FLT_MAX;
  if (t == DType::f16) bits = 11, min_exp = -24, max_finite = 65504.0;
  if (t == DType::bf16) bits = 8, min_exp = -133, max_finite = std::ldexp(255.0, 120);  // (2 - 2^-7) * 2^127
  int e = 0;
  std::frexp(v, &e);  // |v| in [2^(e-1), 2^e): its ulp in the dtype is 2^(e - bits), no finer than a subnormal's
  const int ulp_exp = e - bits > min_exp ? e - bits : min_exp;
  const double r = std::ldexp(std::nearbyint(std::ldexp(v, -ulp_exp)), ulp_exp);  // the default mode: to even
  return std::fabs(r) > max_finite ? std::copysign(HUGE_VAL, v) : r;
}

void fused_add_rmsnorm_row(const double* x_row, const double* residual_row, const double* w, double* x_out,
                           double* residual_out, int64_t hidden, double eps, DType t) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("fused_add_rmsnorm reference: " + what);
  };
  require(x_row && residual_row && w && x_out && residual_out, "x_row, residual_row, w, x_out and residual_out must not be null");
  require(hidden > 0, "hidden must be > 0 (got " + std::to_string(hidden) + ")");
  for (int64_t i = 0; i < hidden; ++i) residual_out[i] = round_to_dtype(x_row[i] + residual_row[i], t);
  rmsnorm_row(residual_out, w, x_out, hidden, eps);  // validates eps
}

}  // namespace sb::ref
