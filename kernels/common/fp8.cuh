// FP8 e4m3 (fp8_bits.h) widened on the device to the 16-bit types the tensor-core kernels compute in. Every
// e4m3 value is exact in fp16 and in bf16, so the widening is exact (NaN aside: fp8_bits.h).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "common/fp8_bits.h"

namespace sb {

// Two e4m3 bytes (bits 0-7: the element at the lower address) as a packed pair of T (fp16 or bf16), the
// first element in the low half: the pair the MMA fragments and 16-byte shared-memory chunks hold.
template <typename T>
__device__ __forceinline__ uint32_t e4m3x2_to(uint32_t x);

template <>
__device__ __forceinline__ uint32_t e4m3x2_to<__half>(uint32_t x) {
  uint32_t d;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(d) : "h"(static_cast<uint16_t>(x)));
  return d;
}

template <>
__device__ __forceinline__ uint32_t e4m3x2_to<__nv_bfloat16>(uint32_t x) {
  const uint32_t bits = e4m3x2_to_bf16x2_bits_times_2_to_minus_120(x);
  // One bf16x2 multiply by 2^120 (a power of two: exact, the subnormal inputs included).
  const __nv_bfloat16 two_to_120 = __ushort_as_bfloat16(kBf16TwoTo120);
  const __nv_bfloat162 scaled =
      __hmul2(*reinterpret_cast<const __nv_bfloat162*>(&bits), __nv_bfloat162(two_to_120, two_to_120));
  return *reinterpret_cast<const uint32_t*>(&scaled);
}

// 16 e4m3 bytes (one 16-byte chunk) as 16 values of T in two 16-byte chunks: lo holds elements 0-7, hi 8-15.
template <typename T>
__device__ __forceinline__ void e4m3x16_to(const uint4& in, uint4& lo, uint4& hi) {
  const uint32_t w[4] = {in.x, in.y, in.z, in.w};
  uint32_t out[8];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = e4m3x2_to<T>(w[i] & 0xffffu);
    out[2 * i + 1] = e4m3x2_to<T>(w[i] >> 16);
  }
  lo = make_uint4(out[0], out[1], out[2], out[3]);
  hi = make_uint4(out[4], out[5], out[6], out[7]);
}

}  // namespace sb
