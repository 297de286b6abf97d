// FP8 e4m3 (OCP's E4M3FN, CUDA's __nv_fp8_e4m3: sign, 4 exponent bits of bias 7, 3 mantissa bits; no
// infinities; S.1111.111 is NaN; largest 448, smallest subnormal 2^-9) on the host and in bit form: the value
// of a byte, for references and tests, and the bit moves the kernels widen it with (fp8.cuh). Host-only
// includes: usable without nvcc.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace sb {

// The value of one e4m3 byte (NaN for S.1111.111).
inline double e4m3_value(uint8_t x) {
  const int sign = x >> 7, e = (x >> 3) & 15, m = x & 7;
  if (e == 15 && m == 7) return std::numeric_limits<double>::quiet_NaN();
  const double magnitude = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  return sign ? -magnitude : magnitude;
}

// Two e4m3 bytes (x's bits 0-7 and 8-15) as the bits of two bf16 values (bits 0-15 and 16-31) that are the
// e4m3 values times 2^-120: the sign stays, the exponent and mantissa bits move 4 places right, into bf16's
// fields. That is the value times 2^(7 - 127) for normal and subnormal e4m3 alike (both formats' subnormals
// have the exponent field 0, and e4m3's 3 mantissa bits land on bf16's top 3). NaN (S.1111.111) becomes
// +-480 times 2^-120: the cache of a serving engine holds no NaN.
constexpr uint32_t e4m3x2_to_bf16x2_bits_times_2_to_minus_120(uint32_t x) {
  const uint32_t w = ((x & 0xffu) << 8) | ((x & 0xff00u) << 16);  // byte 0 in bits 8-15, byte 1 in 24-31
  return (w & 0x80008000u) | ((w >> 4) & 0x07f007f0u);
}

// bf16 2^120: the factor that makes those bits the e4m3 values (exponent field 120 + 127, mantissa 0).
inline constexpr uint16_t kBf16TwoTo120 = 0x7b80;

}  // namespace sb
