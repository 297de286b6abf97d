// fp64 CPU reference for fused residual-add + RMSNorm (kernels/fused_add_rmsnorm/fused_add_rmsnorm.h):
//   residual_out = round_to(dtype, x + residual)
//   x_out        = residual_out / sqrt(mean(residual_out^2) + eps) * w     (fp64, not rounded)
// The residual output is the sum rounded to the dtype, because that is what the op stores; the normalization
// reads that rounded sum, as vLLM's fused_add_rms_norm does, so x_out is rmsnorm_row (rmsnorm_ref.h) of it.
// residual_out is exact: the sum of two values of the dtype rounded once (fp32 arithmetic, then rounding to a
// 16-bit type, rounds the same: 24 >= 2 x 11 + 2 bits), so a kernel's residual must equal it bit for bit.
// Row-major, row stride = hidden. Non-finite values propagate the plain IEEE way within their row.
// Invalid arguments throw std::invalid_argument naming the field. No dependencies beyond the C++17 standard
// library (kernels/common/dtype.h is header-only).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace sb::ref {

// v rounded to the nearest value of `t` (ties to even), with the type's subnormals and overflow to +-Inf;
// NaN and Inf unchanged. For v a value of the dtype's sum of two values, the GPU's fp32 add then
// from_float gives the same.
double round_to_dtype(double v, DType t);

// One row. x_out and residual_out may be x_row and residual_row (in place, as the op).
void fused_add_rmsnorm_row(const double* x_row, const double* residual_row, const double* w, double* x_out,
                           double* residual_out, int64_t hidden, double eps, DType t);

}  // namespace sb::ref
