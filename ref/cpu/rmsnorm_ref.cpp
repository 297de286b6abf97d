#include "ref/cpu/rmsnorm_ref.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace sb::ref {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("rmsnorm reference: " + message);
}

std::string to_text(double value) {
  std::ostringstream out;
  out << value;  // %g-style: 1e-06 and -1e-09 stay readable, unlike std::to_string's fixed 6 decimals
  return out.str();
}

void check_row_args(const void* x, const void* w, const void* y, const char* x_name, const char* y_name,
                    int64_t hidden, double eps) {
  require(x != nullptr, std::string(x_name) + " must not be null");
  require(w != nullptr, "w must not be null");
  require(y != nullptr, std::string(y_name) + " must not be null");
  require(hidden > 0, "hidden must be > 0 (got " + std::to_string(hidden) + ")");
  require(std::isfinite(eps) && eps >= 0, "eps must be finite and >= 0 (got " + to_text(eps) + ")");
}

// Unchecked row. A plain double sum of squares is enough: inputs come from fp16/bf16/fp32, so
// |x| <= 3.4e38, x^2 <= 1.2e77 and even 2^31 of them stay far below DBL_MAX (1.8e308).
void row_unchecked(const double* x, const double* w, double* y, int64_t hidden, double eps) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < hidden; ++i) sum_sq += x[i] * x[i];
  const double rms = std::sqrt(sum_sq / static_cast<double>(hidden) + eps);
  // Divide rather than multiply by 1/rms: one rounding fewer, and it is the formula as written.
  for (int64_t i = 0; i < hidden; ++i) y[i] = x[i] / rms * w[i];
}

}  // namespace

void rmsnorm_row(const double* x_row, const double* w, double* y_row, int64_t hidden, double eps) {
  check_row_args(x_row, w, y_row, "x_row", "y_row", hidden, eps);
  row_unchecked(x_row, w, y_row, hidden, eps);
}

void rmsnorm(const double* x, const double* w, double* y, int64_t rows, int64_t hidden, double eps) {
  check_row_args(x, w, y, "x", "y", hidden, eps);
  require(rows > 0, "rows must be > 0 (got " + std::to_string(rows) + ")");
  for (int64_t r = 0; r < rows; ++r) row_unchecked(x + r * hidden, w, y + r * hidden, hidden, eps);
}

}  // namespace sb::ref
