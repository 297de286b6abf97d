#include "harness/fill.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include <cub/device/device_reduce.cuh>
#include <cuda_fp8.h>

#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/vec.cuh"
#include "harness/device.h"
#include "harness/word_sum.cuh"

namespace sb::bench {

namespace {

constexpr int kThreads = 256;

unsigned grid_for(std::size_t n) {
  const std::size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65536 ? (blocks ? blocks : 1) : 65536);
}

__device__ inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename T>
__global__ void normal_kernel(T* p, std::size_t n, std::uint64_t seed, float mean, float stddev) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    const std::uint64_t h = splitmix64(seed ^ splitmix64(i));
    // Two 24-bit uniforms in (0, 1]; Box-Muller's first output.
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) * 0x1p-24f;
    const float u2 = static_cast<float>((h >> 16) & 0xffffffu) * 0x1p-24f;
    const float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    p[i] = from_float<T>(mean + stddev * z);
  }
}

// Grid-stride copy, 4 independent 16-byte loads a thread an iteration (bytes in flight to cover the
// memory latency with a grid of a few blocks an SM), then the remainder one at a time.
template <typename V>
__global__ void copy_kernel_impl(V* __restrict__ dst, const V* __restrict__ src, std::size_t n) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const V a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

template <bool EvictLast>
__global__ void read_kernel_impl(const uint4* p, std::size_t n, unsigned never, unsigned* sink) {
  [[maybe_unused]] uint64_t policy = 0;
  if constexpr (EvictLast) policy = l2_evict_last_policy();
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    uint4 v;
    if constexpr (EvictLast)
      asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "l"(p + i), "l"(policy));
    else
      asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p + i));
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == never) *sink = acc;
}

// kReadSumUnroll independent 16-byte loads a thread an iteration over [a | b]: with a grid of up to 8 blocks
// of kThreads an SM, enough bytes in flight to stream at the DRAM's rate.
constexpr int kReadSumUnroll = 8;

// The wrapping word sum of [a | b] (na and nb 16-byte vectors) over the indices i, i + stride, ... that a thread
// of a grid-stride loop takes: kReadSumUnroll loads in flight, then the remainder one at a time. Plain loads,
// the range chosen by a pointer select: with __restrict__ the loads compile to ld.global.nc with the range
// chosen by a branch, each load behind its own branch, which streams markedly slower.
__device__ __forceinline__ unsigned sum_two_ranges(const uint4* a, std::size_t na, const uint4* b, std::size_t nb,
                                                   std::size_t i, std::size_t stride) {
  const std::size_t n = na + nb;
  unsigned acc = 0;
  for (; i + (kReadSumUnroll - 1) * stride < n; i += kReadSumUnroll * stride) {
    uint4 v[kReadSumUnroll];
#pragma unroll
    for (int u = 0; u < kReadSumUnroll; ++u) {
      const std::size_t j = i + u * stride;
      const uint4* p = j < na ? a + j : b + (j - na);
      v[u] = *p;
    }
#pragma unroll
    for (int u = 0; u < kReadSumUnroll; ++u) acc += word_sum4(v[u]);
  }
  for (; i < n; i += stride) acc += word_sum4(*(i < na ? a + i : b + (i - na)));
  return acc;
}

__global__ void read_sum_impl(const uint4* a, std::size_t na, const uint4* b, std::size_t nb, unsigned* block_sums) {
  const unsigned acc = sum_two_ranges(a, na, b, nb, blockIdx.x * std::size_t{blockDim.x} + threadIdx.x,
                                      std::size_t{gridDim.x} * blockDim.x);
  write_block_word_sum<kThreads>(acc, block_sums + blockIdx.x);
}

// Block b * max_pages + j reads the rows of page slot j of sequence b that the sequence owns, in K then in V;
// a slot past the sequence reads nothing and writes 0.
__global__ void paged_read_sum_impl(const uint4* k, const uint4* v, const int32_t* block_table, const int32_t* seq_lens,
                                    int max_pages, int page_size, std::size_t row_vecs, unsigned* block_sums) {
  const int b = static_cast<int>(blockIdx.x / max_pages), j = static_cast<int>(blockIdx.x % max_pages);
  const int rows = min(page_size, seq_lens[b] - j * page_size);
  unsigned acc = 0;
  if (rows > 0) {
    const auto page = static_cast<std::size_t>(block_table[static_cast<std::size_t>(blockIdx.x)]);
    const std::size_t offset = page * page_size * row_vecs, n = static_cast<std::size_t>(rows) * row_vecs;
    acc = sum_two_ranges(k + offset, n, v + offset, n, threadIdx.x, blockDim.x);
  }
  write_block_word_sum<kThreads>(acc, block_sums + blockIdx.x);
}

// x / scale rounded to e4m3 (to nearest, saturating at +-448).
__device__ inline __nv_fp8_storage_t e4m3_of(float x, float inv_scale) {
  return __nv_cvt_float_to_fp8(x * inv_scale, __NV_SATFINITE, __NV_E4M3);
}

template <typename T>
__global__ void round_through_e4m3_kernel(T* p, std::size_t n, float scale, float inv_scale) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    const __half_raw h = __nv_cvt_fp8_to_halfraw(e4m3_of(to_float(p[i]), inv_scale), __NV_E4M3);
    p[i] = from_float<T>(__half2float(__half(h)) * scale);
  }
}

template <typename T>
__global__ void to_e4m3_kernel(const T* src, __nv_fp8_storage_t* dst, std::size_t n, float inv_scale) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    dst[i] = e4m3_of(to_float(src[i]), inv_scale);
}

template <typename T>
__global__ void nan_kernel(T* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    p[i] = from_float<T>(__int_as_float(0x7fffffff));
}

template <typename T>
__global__ void nonfinite_kernel(const T* p, std::size_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    local += !isfinite(to_float(p[i]));
  if (local) atomicAdd(count, local);
}

}  // namespace

void fill_normal(void* p, std::size_t n, DType t, std::uint64_t seed, float mean, float stddev, cudaStream_t s) {
  dispatch(t, [&](auto tag) {
    using T = decltype(tag);
    normal_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<T*>(p), n, seed, mean, stddev);
  });
  SB_LAUNCH_CHECK();
}

void round_through_e4m3(void* p, std::size_t n, DType t, float scale, cudaStream_t s) {
  if (!(scale > 0) || !std::isfinite(scale))
    throw std::invalid_argument("round_through_e4m3: scale must be finite and > 0");
  dispatch(t, [&](auto tag) {
    using T = decltype(tag);
    round_through_e4m3_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<T*>(p), n, scale, 1.0f / scale);
  });
  SB_LAUNCH_CHECK();
}

void to_e4m3(const void* src, std::size_t n, DType t, float scale, void* dst, cudaStream_t s) {
  if (!(scale > 0) || !std::isfinite(scale)) throw std::invalid_argument("to_e4m3: scale must be finite and > 0");
  dispatch(t, [&](auto tag) {
    using T = decltype(tag);
    to_e4m3_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(src),
                                                       static_cast<__nv_fp8_storage_t*>(dst), n, 1.0f / scale);
  });
  SB_LAUNCH_CHECK();
}

void fill_nan(void* p, std::size_t n, DType t, cudaStream_t s) {
  dispatch(t, [&](auto tag) {
    using T = decltype(tag);
    nan_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<T*>(p), n);
  });
  SB_LAUNCH_CHECK();
}

void read_kernel(const void* p, std::size_t bytes, bool evict_last, unsigned never, unsigned* sink, cudaStream_t s) {
  if (bytes % 16 != 0 || reinterpret_cast<std::uintptr_t>(p) % 16 != 0)
    throw std::invalid_argument("read_kernel: the buffer must be 16-byte aligned and a multiple of 16 bytes long");
  if (bytes == 0) return;
  static const int sms = device_info().sm_count;
  const std::size_t n = bytes / 16;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((n + kThreads - 1) / kThreads, std::size_t{4} * sms));
  const auto* v = static_cast<const uint4*>(p);
  if (evict_last)
    read_kernel_impl<true><<<blocks, kThreads, 0, s>>>(v, n, never, sink);
  else
    read_kernel_impl<false><<<blocks, kThreads, 0, s>>>(v, n, never, sink);
  SB_LAUNCH_CHECK();
}

unsigned read_sum_blocks(std::size_t bytes) {
  static const int sms = device_info().sm_count;
  const std::size_t per_block = std::size_t{16} * kThreads * kReadSumUnroll;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>((bytes + per_block - 1) / per_block,
                                                                              std::size_t{8} * sms)));
}

void read_sum_kernel(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes, unsigned* block_sums,
                     cudaStream_t s) {
  auto aligned = [](const void* p, std::size_t bytes) {
    return bytes % 16 == 0 && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
  };
  if (!aligned(a, a_bytes) || !aligned(b, b_bytes))
    throw std::invalid_argument("read_sum_kernel: both ranges must be 16-byte aligned and a multiple of 16 bytes long");
  if ((a == nullptr && a_bytes > 0) || (b == nullptr && b_bytes > 0))
    throw std::invalid_argument("read_sum_kernel: a range of more than 0 bytes starts at a null pointer");
  if (block_sums == nullptr) throw std::invalid_argument("read_sum_kernel: block_sums is null");
  read_sum_impl<<<read_sum_blocks(a_bytes + b_bytes), kThreads, 0, s>>>(
      static_cast<const uint4*>(a), a_bytes / 16, static_cast<const uint4*>(b), b_bytes / 16, block_sums);
  SB_LAUNCH_CHECK();
}

void paged_read_sum_kernel(const void* k_pages, const void* v_pages, const int32_t* block_table,
                           const int32_t* seq_lens, int64_t batch, int64_t max_pages, int64_t page_size,
                           std::size_t row_bytes, unsigned* block_sums, cudaStream_t s) {
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  if (k_pages == nullptr || v_pages == nullptr || block_table == nullptr || seq_lens == nullptr || block_sums == nullptr)
    throw std::invalid_argument("paged_read_sum_kernel: a pool, the block table, the lengths or block_sums is null");
  if (!aligned(k_pages) || !aligned(v_pages) || row_bytes == 0 || row_bytes % 16 != 0)
    throw std::invalid_argument("paged_read_sum_kernel: the pools must be 16-byte aligned and a key row a multiple of 16 bytes");
  if (batch < 1 || max_pages < 1 || page_size < 1 || batch * max_pages > INT32_MAX || page_size > INT32_MAX / 2)
    throw std::invalid_argument("paged_read_sum_kernel: batch, max_pages and page_size must be positive, "
                                "batch * max_pages at most 2^31 - 1");
  paged_read_sum_impl<<<static_cast<unsigned>(batch * max_pages), kThreads, 0, s>>>(
      static_cast<const uint4*>(k_pages), static_cast<const uint4*>(v_pages), block_table, seq_lens,
      static_cast<int>(max_pages), static_cast<int>(page_size), row_bytes / 16, block_sums);
  SB_LAUNCH_CHECK();
}

unsigned word_sum(const void* p, std::size_t bytes, cudaStream_t s) {
  if (bytes % 4 != 0 || reinterpret_cast<std::uintptr_t>(p) % 4 != 0)
    throw std::invalid_argument("word_sum: the range must be 4-byte aligned and a multiple of 4 bytes long");
  if (p == nullptr && bytes > 0)
    throw std::invalid_argument("word_sum: a range of more than 0 bytes starts at a null pointer");
  const auto* words = static_cast<const unsigned*>(p);
  std::size_t n = bytes / 4;
  DeviceBuffer out(sizeof(unsigned));
  unsigned total = 0;
  constexpr std::size_t kChunk = std::size_t{1} << 30;  // CUB's item count is an int
  for (std::size_t done = 0; done < n; done += kChunk) {
    const int items = static_cast<int>(std::min(kChunk, n - done));
    std::size_t temp_bytes = 0;
    SB_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, words + done, out.as<unsigned>(), items, s));
    DeviceBuffer temp(temp_bytes);
    SB_CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), temp_bytes, words + done, out.as<unsigned>(), items, s));
    unsigned chunk = 0;
    SB_CUDA_CHECK(cudaMemcpyAsync(&chunk, out.get(), sizeof(chunk), cudaMemcpyDeviceToHost, s));
    SB_CUDA_CHECK(cudaStreamSynchronize(s));
    total += chunk;
  }
  return total;
}

void copy_kernel(void* dst, const void* src, std::size_t bytes, cudaStream_t s) {
  if (bytes == 0) return;
  static const int sms = device_info().sm_count;  // once: not on every timed launch
  auto launch = [&](auto* d, const auto* p, std::size_t n) {
    // Enough threads for n / 4 elements each, at most 8 blocks of kThreads an SM (one resident wave).
    const std::size_t want = (n + 4 * kThreads - 1) / (4 * kThreads);
    const std::size_t cap = static_cast<std::size_t>(sms) * 8;
    copy_kernel_impl<<<static_cast<unsigned>(want < cap ? want : cap), kThreads, 0, s>>>(d, p, n);
    SB_LAUNCH_CHECK();
  };
  if (bytes % 16 == 0 && reinterpret_cast<std::uintptr_t>(dst) % 16 == 0 && reinterpret_cast<std::uintptr_t>(src) % 16 == 0)
    launch(static_cast<uint4*>(dst), static_cast<const uint4*>(src), bytes / 16);
  else
    launch(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), bytes);
}

std::size_t count_nonfinite(const void* p, std::size_t n, DType t, cudaStream_t s) {
  DeviceBuffer count(sizeof(unsigned long long));
  SB_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, count.bytes(), s));
  dispatch(t, [&](auto tag) {
    using T = decltype(tag);
    nonfinite_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(p), n, count.as<unsigned long long>());
  });
  SB_LAUNCH_CHECK();
  unsigned long long host = 0;
  SB_CUDA_CHECK(cudaMemcpyAsync(&host, count.get(), sizeof(host), cudaMemcpyDeviceToHost, s));
  SB_CUDA_CHECK(cudaStreamSynchronize(s));
  return static_cast<std::size_t>(host);
}

}  // namespace sb::bench
