// Standalone probe (not committed): which plain read kernel is fastest at decode sizes, cold and hot.
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

__device__ __forceinline__ unsigned wsum(uint4 v) { return v.x + v.y + v.z + v.w; }

// grid-stride over the concatenation [a | b], U independent loads a thread an iteration
template <int U, bool NC>
__global__ void gs(const uint4* a, size_t na, const uint4* b, size_t nb, unsigned* part) {
  const size_t n = na + nb, stride = size_t{gridDim.x} * blockDim.x;
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  unsigned acc = 0;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t j = i + u * stride;
      const uint4* p = j < na ? a + j : b + (j - na);
      if (NC) v[u] = __ldcs(p); else v[u] = *p;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) acc += wsum(v[u]);
  }
  for (; i < n; i += stride) { const uint4* p = i < na ? a + i : b + (i - na); acc += wsum(*p); }
  for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(~0u, acc, o);
  __shared__ unsigned s[32];
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) { unsigned t = 0; for (int w = 0; w < blockDim.x / 32; ++w) t += s[w]; part[blockIdx.x] = t; }
}

__global__ void rnd(unsigned* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    unsigned long long z = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed; z ^= z >> 31; z *= 0xbf58476d1ce4e5b9ull; z ^= z >> 29;
    p[i] = (unsigned)z;
  }
}
// block-contiguous: block k reads [k*chunk, (k+1)*chunk) of the concatenation, U loads in flight a thread
template <int U>
__global__ void chunked(const uint4* a, size_t na, const uint4* b, size_t nb, unsigned* part) {
  const size_t n = na + nb, chunk = (n + gridDim.x - 1) / gridDim.x;
  const size_t lo = blockIdx.x * chunk, hi = lo + chunk < n ? lo + chunk : n;
  unsigned acc = 0;
  size_t i = lo + threadIdx.x;
  for (; i + (U - 1) * blockDim.x < hi; i += U * blockDim.x) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) { const size_t j = i + u * blockDim.x; const uint4* p = j < na ? a + j : b + (j - na); v[u] = *p; }
#pragma unroll
    for (int u = 0; u < U; ++u) acc += wsum(v[u]);
  }
  for (; i < hi; i += blockDim.x) { const uint4* p = i < na ? a + i : b + (i - na); acc += wsum(*p); }
  for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(~0u, acc, o);
  __shared__ unsigned s[32];
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) { unsigned t = 0; for (int w = 0; w < blockDim.x / 32; ++w) t += s[w]; part[blockIdx.x] = t; }
}

int main(int argc, char** argv) {
  const bool random = argc > 1 && argv[1][0] == 'r';
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int l2; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  cudaStream_t s; CK(cudaStreamCreate(&s));
  void* flush; CK(cudaMalloc(&flush, l2));
  unsigned* part; CK(cudaMalloc(&part, 1 << 20));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  struct Size { const char* name; size_t each; };
  std::vector<Size> sizes = {{"b1_kv4096 16.8MB", 8388608}, {"b16_kv32768 2.15GB", 1073741824}};
  for (auto sz : sizes) {
    void *a, *b; CK(cudaMalloc(&a, sz.each)); CK(cudaMalloc(&b, sz.each));
    if (random) { rnd<<<1024, 256>>>((unsigned*)a, sz.each / 4, 1); rnd<<<1024, 256>>>((unsigned*)b, sz.each / 4, 2); CK(cudaDeviceSynchronize()); }
    else { CK(cudaMemset(a, 1, sz.each)); CK(cudaMemset(b, 2, sz.each)); }
    const size_t na = sz.each / 16, n = 2 * na;
    auto run = [&](const char* nm, auto kern, int threads, int per_sm, int U) {
      for (int cold = 1; cold >= 0; --cold) {
        size_t want = (n + size_t(U) * threads - 1) / (size_t(U) * threads);
        unsigned grid = (unsigned)std::min<size_t>(want, size_t(per_sm) * sms);
        std::vector<float> t;
        for (int r = 0; r < 30; ++r) {
          if (cold) CK(cudaMemsetAsync(flush, r, l2, s));
          CK(cudaEventRecord(e0, s));
          kern<<<grid, threads, 0, s>>>((const uint4*)a, na, (const uint4*)b, na, part);
          CK(cudaEventRecord(e1, s));
          CK(cudaStreamSynchronize(s));
          float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (r >= 5) t.push_back(ms * 1000);
        }
        std::sort(t.begin(), t.end());
        float med = t[t.size() / 2];
        printf("%s %-22s %-28s grid %5u %s %10.2f us %8.1f GB/s\n", random ? "rand " : "const", sz.name, nm, grid, cold ? "cold" : "hot ", med, 2.0 * sz.each / med / 1e3);
      }
    };
    run("gs U4 thr256 8/SM", gs<4, false>, 256, 8, 4);
    run("gs U8 thr256 8/SM", gs<8, false>, 256, 8, 8);
    run("gs U8 nc thr256 8/SM", gs<8, true>, 256, 8, 8);
    run("gs U8 thr1024 2/SM", gs<8, false>, 1024, 2, 8);
    run("gs U16 thr256 8/SM", gs<16, false>, 256, 8, 16);
    run("chunk U8 thr256 8/SM", chunked<8>, 256, 8, 8);
    run("chunk U4 thr512 4/SM", chunked<4>, 512, 4, 4);
    run("gs U8 thr256 4/SM", gs<8, false>, 256, 4, 8);
    CK(cudaFree(a)); CK(cudaFree(b));
  }
  return 0;
  // copy ceiling for context: 1 GiB cudaMemcpyAsync, cold
  void *a, *b; size_t g = 1ull << 30; CK(cudaMalloc(&a, g)); CK(cudaMalloc(&b, g));
  std::vector<float> t;
  for (int r = 0; r < 15; ++r) { CK(cudaMemsetAsync(flush, r, l2, s)); CK(cudaEventRecord(e0, s)); CK(cudaMemcpyAsync(b, a, g, cudaMemcpyDeviceToDevice, s)); CK(cudaEventRecord(e1, s)); CK(cudaStreamSynchronize(s)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (r >= 3) t.push_back(ms * 1000); }
  std::sort(t.begin(), t.end()); printf("memcpy 1GiB cold %.1f us %.1f GB/s (read+write)\n", t[t.size()/2], 2.0 * g / t[t.size()/2] / 1e3);
  // empty kernel cold/hot floor for context
  return 0;
}
