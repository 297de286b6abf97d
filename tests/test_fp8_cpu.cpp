// FP8 e4m3 on the host (kernels/common/fp8_bits.h): the value of every byte, and the bit moves that widen two
// bytes into bf16 (the paged kernel's widening over an FP8 cache), checked against those values for every byte.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/fp8_bits.h"

namespace {

double bf16_value(uint16_t bits) {
  const uint32_t f = static_cast<uint32_t>(bits) << 16;
  float v;
  std::memcpy(&v, &f, sizeof v);
  return v;
}

TEST(Fp8E4m3, ValuesOfTheFormatsLandmarks) {
  EXPECT_EQ(sb::e4m3_value(0x00), 0.0);
  EXPECT_TRUE(std::signbit(sb::e4m3_value(0x80)));
  EXPECT_EQ(sb::e4m3_value(0x38), 1.0);               // exponent 7 (the bias), mantissa 0
  EXPECT_EQ(sb::e4m3_value(0x7e), 448.0);             // the largest finite value
  EXPECT_EQ(sb::e4m3_value(0xfe), -448.0);
  EXPECT_EQ(sb::e4m3_value(0x01), std::ldexp(1.0, -9));  // the smallest subnormal
  EXPECT_EQ(sb::e4m3_value(0x07), 7 * std::ldexp(1.0, -9));
  EXPECT_EQ(sb::e4m3_value(0x08), std::ldexp(1.0, -6));  // the smallest normal
  EXPECT_TRUE(std::isnan(sb::e4m3_value(0x7f)));
  EXPECT_TRUE(std::isnan(sb::e4m3_value(0xff)));
  EXPECT_EQ(sb::e4m3_value(0x78), 256.0);  // S.1111.000: finite (E4M3FN has no infinities)
}

TEST(Fp8E4m3, TheBf16BitMovesTimes2To120AreEveryBytesValue) {
  const double two_to_120 = bf16_value(sb::kBf16TwoTo120);
  EXPECT_EQ(two_to_120, std::ldexp(1.0, 120));
  for (int lo = 0; lo < 256; ++lo)
    for (int hi : {lo, 255 - lo, 0x38}) {
      const uint32_t bits = sb::e4m3x2_to_bf16x2_bits_times_2_to_minus_120(static_cast<uint32_t>(lo | hi << 8));
      for (const auto& [byte, half] : {std::pair<int, uint16_t>{lo, bits & 0xffffu}, {hi, bits >> 16}}) {
        const double want = sb::e4m3_value(static_cast<uint8_t>(byte));
        const double got = bf16_value(half) * two_to_120;  // exact: a power of two
        if (std::isnan(want))
          EXPECT_EQ(std::fabs(got), 480.0) << "byte " << byte;  // NaN reads as +-480 (fp8_bits.h)
        else
          EXPECT_EQ(got, want) << "byte " << byte;
        EXPECT_EQ(std::signbit(got), (byte & 0x80) != 0) << "byte " << byte;
      }
    }
}

}  // namespace
