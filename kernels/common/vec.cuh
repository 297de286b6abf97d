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

inline bool is_aligned(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

}  // namespace sb
