// Element conversions and vector loads/stores. Vec<T, N> is N elements in one aligned access: with
// N * sizeof(T) == 16 it compiles to one 128-bit LDG/STG (check with cuobjdump --dump-sass).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace sb {

template <typename T> __host__ __device__ inline float to_float(T v);
template <> __host__ __device__ inline float to_float(float v) { return v; }
template <> __host__ __device__ inline float to_float(__half v) { return __half2float(v); }
template <> __host__ __device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __host__ __device__ inline T from_float(float v);
template <> __host__ __device__ inline float from_float(float v) { return v; }
template <> __host__ __device__ inline __half from_float(float v) { return __float2half_rn(v); }
template <> __host__ __device__ inline __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }

// Elements of T in a 16-byte access.
template <typename T> inline constexpr int kVec16 = 16 / static_cast<int>(sizeof(T));

template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

// p must be aligned to sizeof(T) * N (callers check this in supports()).
template <int N, typename T>
__device__ inline Vec<T, N> load_vec(const T* p) {
  return *reinterpret_cast<const Vec<T, N>*>(p);
}
template <int N, typename T>
__device__ inline void store_vec(T* p, const Vec<T, N>& v) {
  *reinterpret_cast<Vec<T, N>*>(p) = v;
}

// Two adjacent elements <-> float2, with the packed conversions of the 16-bit types (one instruction
// for two values, fewer registers than element by element).
template <typename T> __device__ inline float2 to_float2(const T* p) { return make_float2(to_float(p[0]), to_float(p[1])); }
template <> __device__ inline float2 to_float2(const __half* p) { return __half22float2(*reinterpret_cast<const __half2*>(p)); }
template <> __device__ inline float2 to_float2(const __nv_bfloat16* p) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
}
template <typename T> __device__ inline void from_float2(T* p, float2 v) {
  p[0] = from_float<T>(v.x);
  p[1] = from_float<T>(v.y);
}
template <> __device__ inline void from_float2(__half* p, float2 v) { *reinterpret_cast<__half2*>(p) = __float22half2_rn(v); }
template <> __device__ inline void from_float2(__nv_bfloat16* p, float2 v) {
  *reinterpret_cast<__nv_bfloat162*>(p) = __float22bfloat162_rn(v);
}

// 16-byte asynchronous global -> shared copy (cp.async, sm_80+): no registers held while in flight.
__device__ inline void cp_async_16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ inline void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
// The same copy for tiles that run past the end of a tensor: when !valid it reads nothing and writes 16
// zero bytes (src-size 0).
// (dst: the destination's shared-state-space address, for callers that do address arithmetic on it.)
__device__ inline void cp_async_16_zfill(unsigned dst, const void* gmem, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(valid ? 16 : 0) : "memory");
}
__device__ inline void cp_async_16_zfill(void* smem, const void* gmem, bool valid) {
  cp_async_16_zfill(static_cast<unsigned>(__cvta_generic_to_shared(smem)), gmem, valid);
}
// Multi-stage pipelines: close this thread's group of copies; wait until at most N groups are in flight.
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// An L2 cache policy that marks every line a load touches evict-last (createpolicy.fractional, fraction 1,
// the form Triton emits for eviction_policy="evict_last"), for ld.global.L2::cache_hint. Make it once a
// thread and pass it to each load.
__device__ inline uint64_t l2_evict_last_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

inline bool is_aligned(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

}  // namespace sb
