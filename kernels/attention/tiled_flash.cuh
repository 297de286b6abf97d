// PTX helpers of the tiled_flash attention variant (cp.async is in common/vec.cuh): ldmatrix (plain and
// transposed), mma.sync m16n8k16 with fp32 accumulators, and 16-bit pair packing; and what tiled_flash and
// wgmma_flash (the same algorithm on wgmma) share: their kernel parameters and the online softmax's
// lazy max step.
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

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "attention/attention.h"
#include "common/fastmath.cuh"
#include "common/vec.cuh"  // is_aligned

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

// What both prefill kernels refuse beyond the dtype (each names its own instruction's): their tiles are
// built for head_dim 64 and 128, their copies are 16-byte cp.async, their grid's y and z are heads_q and
// batch, and Params holds the lengths as ints. "" when the problem fits.
inline std::string params_refusal(const Problem& p) {
  if (p.head_dim != 64 && p.head_dim != 128)
    return "head_dim " + std::to_string(p.head_dim) + " is not supported: built for head_dim 64 and 128 only";
  for (auto [ptr, what] : {std::pair<const void*, const char*>{p.q, "q"}, {p.k, "k"}, {p.v, "v"}, {p.o, "o"}})
    if (!is_aligned(ptr, 16)) return std::string(what) + " is not 16-byte aligned (needed by 16-byte cp.async)";
  if (p.batch > 65535 || p.heads_q > 65535) return "batch and heads_q must be <= 65535 (grid z and y)";
  if (p.q_len >= (int64_t{1} << 30) || p.kv_len >= (int64_t{1} << 30))
    return "q_len and kv_len must be < 2^30 (32-bit row indices)";
  return "";
}

// The prefill kernels' parameters, from a problem params_refusal() accepts.
struct Params {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  int q_len, kv_len, heads_q, heads_kv, group;
  int causal_offset;  // kv_len - q_len: query i sees keys j <= i + causal_offset
  bool causal;
  float scale_log2;  // softmax scale * log2(e)
};
inline Params make_params(const Problem& pr) {
  Params p{};
  p.q = pr.q;
  p.k = pr.k;
  p.v = pr.v;
  p.o = pr.o;
  p.q_len = static_cast<int>(pr.q_len);
  p.kv_len = static_cast<int>(pr.kv_len);
  p.heads_q = static_cast<int>(pr.heads_q);
  p.heads_kv = static_cast<int>(pr.heads_kv);
  p.group = static_cast<int>(pr.heads_q / pr.heads_kv);
  p.causal_offset = static_cast<int>(pr.kv_len - pr.q_len);
  p.causal = pr.causal;
  p.scale_log2 = static_cast<float>(pr.softmax_scale() * 1.4426950408889634);  // log2(e)
  return p;
}

constexpr float kLazyLog2 = 8.0f;  // the reference max of a row moves when the max gains more (log2)

// One row's step of the online softmax, where mx is this thread's max of the row's new scores and the
// row's 4 threads (lanes 4g .. 4g + 3, the accumulator layouts of mma.sync and wgmma) hold a quarter of
// them each. row_max is the reference max of the exponents; it moves only when the row's max gains more
// than kLazyLog2 on it, else P = 2^(s * scale_log2 - base) <= 2^kLazyLog2 (rounded relative as before) and
// O and the sums keep their scale. A row's first key gains +inf on -inf and moves it; no key yet
// (-inf - -inf = NaN) does not: base is then 0, so P = 0 and alpha = 0, never inf - inf. Sets base (the
// exponent offset of P) and alpha (the rescale of O and the partial sum: exactly 1 when the max did not
// move); returns whether it moved.
__device__ __forceinline__ bool lazy_max_step(float& row_max, float mx, float scale_log2, float& base, float& alpha) {
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
  const bool mv = (mx - row_max) * scale_log2 > kLazyLog2;
  const float ref = mv ? mx : row_max;
  base = ref == -INFINITY ? 0.0f : ref * scale_log2;
  alpha = mv ? ex2_approx(row_max * scale_log2 - base) : 1.0f;
  row_max = ref;
  return mv;
}

}  // namespace sb::attention::tiled_flash
