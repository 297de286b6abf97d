// The element types every op supports, named once. Host-only: no CUDA types here, so bench, test and
// reference code can use it without nvcc (dispatch.cuh maps a DType to its CUDA type).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sb {

enum class DType { f32, f16, bf16 };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f16, DType::bf16};

constexpr std::string_view name(DType t) {
  switch (t) {
    case DType::f32: return "fp32";
    case DType::f16: return "fp16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

constexpr std::size_t size_bytes(DType t) { return t == DType::f32 ? 4 : 2; }

// Unit roundoff (half an ulp at 1.0) of the type: 2^-24, 2^-11, 2^-8.
constexpr double unit_roundoff(DType t) {
  switch (t) {
    case DType::f32: return 0x1p-24;
    case DType::f16: return 0x1p-11;
    case DType::bf16: return 0x1p-8;
  }
  return 1.0;
}

// Smallest positive (subnormal) value: the ulp at zero.
constexpr double min_subnormal(DType t) {
  switch (t) {
    case DType::f32: return 0x1p-149;
    case DType::f16: return 0x1p-24;
    case DType::bf16: return 0x1p-133;
  }
  return 0.0;
}

inline std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : kAllDTypes)
    if (s == name(t)) return t;
  return std::nullopt;
}

}  // namespace sb
