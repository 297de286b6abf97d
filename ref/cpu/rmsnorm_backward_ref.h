// fp64 CPU reference for the RMSNorm backward (kernels/rmsnorm_backward/rmsnorm_backward.h): with
// rstd = 1 / sqrt(mean(x^2) + eps), x̂ = x * rstd, g = w * dy, m = mean(x̂ * g):
//   dx = rstd * (g - x̂ * m),  dw = sum over rows of dy * x̂.
// Row-major, row stride = hidden; inputs converted to double by the caller. Invalid arguments throw
// std::invalid_argument naming the field.
#pragma once

#include <cstdint>

namespace sb::ref {

// Optional outputs of one row beside dx, each skipped when null (all [hidden]):
//   dw_sum[i] += dy[i] * x̂[i]     the row's term of dw
//   dw_abs[i] += |dy[i] * x̂[i]|   its magnitude: what the rounding error of an fp32 sum of the terms scales with
//   dx_scale[i] = rstd * (|g[i]| + |x̂[i]| * (|m| + mean(|x̂ * g|)))
//                                 the magnitude of dx's terms, what their rounding errors scale with
struct RmsNormBackwardRowOut {
  double* dx = nullptr;
  double* dw_sum = nullptr;
  double* dw_abs = nullptr;
  double* dx_scale = nullptr;
};
void rmsnorm_backward_row(const double* x_row, const double* w, const double* dy_row, int64_t hidden, double eps,
                          const RmsNormBackwardRowOut& out);

// All rows: x, dy and dx are [rows, hidden]; dw is [hidden] (overwritten).
void rmsnorm_backward(const double* x, const double* w, const double* dy, double* dx, double* dw, int64_t rows,
                      int64_t hidden, double eps);

}  // namespace sb::ref
