// Validation shared by the row-wise norm ops (rmsnorm, fused_add_rmsnorm): the fields every such problem has.
// Host-only, no CUDA.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/dtype.h"

namespace sb {

// Throws std::invalid_argument "<op>: <what>".
[[noreturn]] inline void invalid(const char* op, const std::string& what) {
  throw std::invalid_argument(std::string(op) + ": " + what);
}

// rows >= 1, 1 <= hidden <= 2^30, eps finite and >= 0, dtype one of kAllDTypes; otherwise throws naming the field.
inline void validate_norm_shape(const char* op, int64_t rows, int64_t hidden, double eps, DType dtype) {
  if (rows <= 0) invalid(op, "rows must be >= 1, got " + std::to_string(rows));
  if (hidden <= 0) invalid(op, "hidden must be >= 1, got " + std::to_string(hidden));
  if (hidden > (int64_t{1} << 30)) invalid(op, "hidden must be <= 2^30, got " + std::to_string(hidden));
  if (!std::isfinite(eps) || eps < 0) invalid(op, "eps must be finite and >= 0, got " + std::to_string(eps));
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16)
    invalid(op, "dtype: unsupported value " + std::to_string(static_cast<int>(dtype)));
}

// Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte.
inline bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

}  // namespace sb
