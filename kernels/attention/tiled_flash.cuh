// PTX helpers of the tiled_flash attention variant (cp.async is in common/vec.cuh): ldmatrix (plain and
// transposed), mma.sync m16n8k16 with fp32 accumulators, ex2.approx, and 16-bit pair packing.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"), with
// g = lane / 4 (groupID) and t = lane % 4 (threadID_in_group); every register holds two 16-bit values,
// the lower column (or k) index in the low half:
//   A (16 x 16, row-major): a[0] = (row g,     k 2t..2t+1)   a[1] = (row g + 8, k 2t..2t+1)
//                           a[2] = (row g,     k 2t+8..+9)   a[3] = (row g + 8, k 2t+8..+9)
//   B (16 x 8, "col"):      b[0] = (k 2t..2t+1, col g)       b[1] = (k 2t+8..+9, col g)
//   C (16 x 8, fp32):       c[0], c[1] = (row g, cols 2t, 2t+1)   c[2], c[3] = (row g + 8, same cols)
// ldmatrix.x4: lanes 8i..8i+7 give the row addresses (16 bytes each) of 8x8 matrix i, and register i
// of lane l receives row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1 of matrix i; with .trans it
// receives elements (row 2 (l % 4), col l / 4) and (row 2 (l % 4) + 1, col l / 4) instead.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace sb::attention::tiled_flash {

__device__ inline unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// `addr` is a shared-state-space address (smem_addr): base + constant offsets fold into the instruction.
__device__ inline void ldmatrix_x4(uint32_t (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ inline void ldmatrix_x4_trans(uint32_t (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// c += a * b for one m16n8k16 tile; T selects the operand type (__half or __nv_bfloat16).
template <typename T>
__device__ inline void mma_16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
template <>
__device__ inline void mma_16816<__nv_bfloat16>(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ inline void mma_16816<__half>(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats -> two 16-bit values in one register, `lo` in the low half (round to nearest even).
template <typename T>
__device__ inline uint32_t pack2(float lo, float hi);
template <>
__device__ inline uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}
template <>
__device__ inline uint32_t pack2<__half>(float lo, float hi) {
  const __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

}  // namespace sb::attention::tiled_flash
