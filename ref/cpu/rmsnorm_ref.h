// fp64 CPU reference for RMSNorm: y[r, i] = x[r, i] / sqrt(mean_i(x[r, i]^2) + eps) * w[i].
// Row-major, row stride = hidden. The caller converts fp16/bf16/fp32 inputs to double and compares the
// kernel's output against these doubles. No dependencies beyond the C++17 standard library.
//
// Non-finite values propagate the plain IEEE way and stay inside their row: an Inf or NaN in row r makes
// row r non-finite and leaves every other row untouched. A row of zeros with eps = 0 gives 0/0 = NaN.
// Invalid arguments throw std::invalid_argument naming the field.
#pragma once

#include <cstdint>

namespace sb::ref {

// One row: x_row and y_row hold `hidden` elements, w holds `hidden` weights. Used directly to verify
// sampled rows of problems too large to check in full.
void rmsnorm_row(const double* x_row, const double* w, double* y_row, int64_t hidden, double eps);

// All rows: x and y are [rows, hidden], contiguous.
void rmsnorm(const double* x, const double* w, double* y, int64_t rows, int64_t hidden, double eps);

}  // namespace sb::ref
