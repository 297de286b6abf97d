// PTX helpers of the wgmma_flash attention variant: Hopper's warpgroup MMA (wgmma.mma_async, sm_90a),
// its fences, and the shared-memory matrix descriptor. Built only where the compiler targets sm_90a;
// elsewhere the kernel that uses them compiles to a trap and supports() refuses (wgmma_flash.cu).
//
// A warpgroup is 4 consecutive warps (128 threads). wgmma.m64nNk16 multiplies a 64 x 16 A by a 16 x N B
// into a 64 x N fp32 accumulator held N / 2 floats a thread; warp w of the group holds rows 16w..16w+15
// in the layout of mma.sync m16n8k16's C, repeated for each n8 column block (g = lane / 4, t = lane % 4):
//   d[4j + 0], d[4j + 1] = (row 16w + g,     cols 8j + 2t, 8j + 2t + 1)
//   d[4j + 2], d[4j + 3] = (row 16w + g + 8, the same cols)
// An A held in registers has mma.sync m16n8k16's A layout for the warp's 16 rows (tiled_flash.cuh), so the
// accumulator of two n8 blocks, rounded to 16 bits, is the A of one k16 step as it stands.
//
// Shared-memory operands (PTX ISA, "Matrix Descriptor Format"; every tile here uses the 128-byte swizzle):
// a tile is stored as column blocks of 64 16-bit elements (128 bytes a row); within a block, row r's
// 16-byte chunk c sits at chunk c ^ (r % 8) (the hardware's Swizzle<3,4,3> on address bits, so every
// 8-row group must start 1024-byte aligned). The descriptor holds the start address, the stride byte
// offset (SBO: between 8-row groups, 1024 bytes here) and the leading byte offset (LBO):
//   K-major operand (Q as A, K as B of Q K^T: the k index, head_dim, is contiguous): LBO unused; a k16
//     step inside a 64-element block moves the start by 32 bytes, the next block by its size.
//   MN-major operand (V as B of P V, "transposed": the n index, head_dim, is contiguous): LBO = the
//     distance between 64-column blocks, SBO = between 8-key groups; a k16 step moves the start 2 groups.
// Ordering: wgmma reads shared memory through the async proxy, so data written by cp.async or st.shared
// needs fence.proxy.async before a barrier and the wgmma; registers written by ordinary instructions
// (accumulators, A) need wgmma.fence before the wgmma that reads them, and nothing may touch an
// accumulator or A register between the wgmma and the wait_group that retires it (fence_operands keeps
// the compiler from moving reads of an accumulator above the wait).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace sb::attention::wgmma {

__device__ inline void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ inline void commit_group() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ inline void wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Generic-proxy writes of this thread to shared memory (cp.async, st.shared) become visible to the async
// proxy (wgmma's operand reads); a barrier after it publishes them to the other threads.
__device__ inline void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// The compiler sees each register as redefined here: reads of an accumulator stay below a wait_group, and
// writes to it above the next wgmma.
template <int N>
__device__ inline void fence_operands(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ inline void fence_operands(uint32_t (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// Descriptor of a 128-byte-swizzled operand at shared-state-space byte address `addr`; lbo and sbo in
// bytes (multiples of 16). Bits: 0-13 address >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 62-63 swizzle (1 = 128B).
__device__ inline uint64_t desc_sw128(unsigned addr, unsigned lbo, unsigned sbo) {
  return static_cast<uint64_t>((addr & 0x3FFFFu) >> 4) | static_cast<uint64_t>((lbo >> 4) & 0x3FFFu) << 16 |
         static_cast<uint64_t>((sbo >> 4) & 0x3FFFu) << 32 | uint64_t{1} << 62;
}

// The operand lists, written out once: 32 or 64 fp32 accumulators a thread (m64n64, m64n128), as the
// registers of the asm template and as its in/out operands bound to d.
#define SB_WGMMA_REGS32 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "  \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define SB_WGMMA_REGS64 \
  SB_WGMMA_REGS32 "," \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "  \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define SB_WGMMA_ACC32(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define SB_WGMMA_ACC64(d) \
    SB_WGMMA_ACC32(d), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// One asm statement per shape; TYPE is the operands' PTX type, "bf16" or "f16". scale-d is a predicate,
// set from an integer: 0 writes d = A B, 1 accumulates.
// d (+)= A B with A and B in shared memory, both K-major.
#define SB_WGMMA_SS_M64N128K16(TYPE)                                                                \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                           \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {" SB_WGMMA_REGS64 "}, "     \
               "%64, %65, p, 1, 1, 0, 0;\n}\n"                                                        \
               : SB_WGMMA_ACC64(d)                                                                    \
               : "l"(a), "l"(b), "r"(scale_d))
// d += A B with A in registers (A's mma.sync layout, above) and B in shared memory, MN-major (trans-b).
#define SB_WGMMA_RS_M64N128K16(TYPE)                                                                \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                           \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {" SB_WGMMA_REGS64 "}, "     \
               "{%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"                                           \
               : SB_WGMMA_ACC64(d)                                                                    \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(1))
#define SB_WGMMA_RS_M64N64K16(TYPE)                                                                 \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                           \
               "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {" SB_WGMMA_REGS32 "}, "      \
               "{%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"                                           \
               : SB_WGMMA_ACC32(d)                                                                    \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(1))

template <typename T>
__device__ inline void mma_ss_m64n128k16(float (&d)[64], uint64_t a, uint64_t b, int scale_d) {
  if constexpr (std::is_same_v<T, __half>)
    SB_WGMMA_SS_M64N128K16("f16");
  else
    SB_WGMMA_SS_M64N128K16("bf16");
}
template <typename T>
__device__ inline void mma_rs_m64n128k16(float (&d)[64], const uint32_t (&a)[4], uint64_t b) {
  if constexpr (std::is_same_v<T, __half>)
    SB_WGMMA_RS_M64N128K16("f16");
  else
    SB_WGMMA_RS_M64N128K16("bf16");
}
template <typename T>
__device__ inline void mma_rs_m64n64k16(float (&d)[32], const uint32_t (&a)[4], uint64_t b) {
  if constexpr (std::is_same_v<T, __half>)
    SB_WGMMA_RS_M64N64K16("f16");
  else
    SB_WGMMA_RS_M64N64K16("bf16");
}

#undef SB_WGMMA_SS_M64N128K16
#undef SB_WGMMA_RS_M64N128K16
#undef SB_WGMMA_RS_M64N64K16
#undef SB_WGMMA_ACC64
#undef SB_WGMMA_ACC32
#undef SB_WGMMA_REGS64
#undef SB_WGMMA_REGS32

}  // namespace sb::attention::wgmma
