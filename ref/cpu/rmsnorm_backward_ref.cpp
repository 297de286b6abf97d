#include "ref/cpu/rmsnorm_backward_ref.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace sb::ref {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("rmsnorm_backward reference: " + message);
}

void check_args(const void* x, const void* w, const void* dy, int64_t hidden, double eps) {
  require(x != nullptr, "x must not be null");
  require(w != nullptr, "w must not be null");
  require(dy != nullptr, "dy must not be null");
  require(hidden > 0, "hidden must be > 0 (got " + std::to_string(hidden) + ")");
  require(std::isfinite(eps) && eps >= 0, "eps must be finite and >= 0");
}

void row_unchecked(const double* x, const double* w, const double* dy, int64_t hidden, double eps,
                   const RmsNormBackwardRowOut& out) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < hidden; ++i) sum_sq += x[i] * x[i];
  const double n = static_cast<double>(hidden);
  const double rstd = 1.0 / std::sqrt(sum_sq / n + eps);
  double sum_xg = 0.0, sum_abs_xg = 0.0;
  for (int64_t i = 0; i < hidden; ++i) {
    const double xg = x[i] * rstd * w[i] * dy[i];
    sum_xg += xg;
    sum_abs_xg += std::fabs(xg);
  }
  const double m = sum_xg / n, mean_abs = sum_abs_xg / n;
  for (int64_t i = 0; i < hidden; ++i) {
    const double xhat = x[i] * rstd, g = w[i] * dy[i];
    if (out.dx) out.dx[i] = rstd * (g - xhat * m);
    if (out.dw_sum) out.dw_sum[i] += dy[i] * xhat;
    if (out.dw_abs) out.dw_abs[i] += std::fabs(dy[i] * xhat);
    if (out.dx_scale) out.dx_scale[i] = rstd * (std::fabs(g) + std::fabs(xhat) * (std::fabs(m) + mean_abs));
  }
}

}  // namespace

void rmsnorm_backward_row(const double* x_row, const double* w, const double* dy_row, int64_t hidden, double eps,
                          const RmsNormBackwardRowOut& out) {
  check_args(x_row, w, dy_row, hidden, eps);
  row_unchecked(x_row, w, dy_row, hidden, eps, out);
}

void rmsnorm_backward(const double* x, const double* w, const double* dy, double* dx, double* dw, int64_t rows,
                      int64_t hidden, double eps) {
  check_args(x, w, dy, hidden, eps);
  require(dx != nullptr, "dx must not be null");
  require(dw != nullptr, "dw must not be null");
  require(rows > 0, "rows must be > 0 (got " + std::to_string(rows) + ")");
  for (int64_t i = 0; i < hidden; ++i) dw[i] = 0.0;
  for (int64_t r = 0; r < rows; ++r)
    row_unchecked(x + r * hidden, w, dy + r * hidden, hidden, eps, {dx + r * hidden, dw, nullptr, nullptr});
}

}  // namespace sb::ref
