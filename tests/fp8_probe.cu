// The device side of the FP8 widening test (test_paged_attention_gpu.cpp): every e4m3 byte pair through
// common/fp8.cuh's e4m3x16_to, as the paged kernel widens an FP8 cache's tiles.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/fp8.cuh"
#include "fp8_probe.h"

namespace sb::test {
namespace {

// Thread i widens the 16-byte chunk i of `in` into elements 16 i .. 16 i + 15 of `out`.
template <typename T>
__global__ void widen_kernel(const uint4* in, uint4* out, int chunks) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < chunks) e4m3x16_to<T>(in[i], out[2 * i], out[2 * i + 1]);
}

}  // namespace

std::vector<uint16_t> widen_e4m3_on_device(const std::vector<uint8_t>& bytes, bool bf16) {
  const int chunks = static_cast<int>(bytes.size() / 16);
  uint4* in = nullptr;
  uint4* out = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&in, bytes.size()));
  SB_CUDA_CHECK(cudaMalloc(&out, 2 * bytes.size()));
  SB_CUDA_CHECK(cudaMemcpy(in, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  if (bf16)
    widen_kernel<__nv_bfloat16><<<(chunks + 127) / 128, 128>>>(in, out, chunks);
  else
    widen_kernel<__half><<<(chunks + 127) / 128, 128>>>(in, out, chunks);
  SB_LAUNCH_CHECK();
  std::vector<uint16_t> result(bytes.size());
  SB_CUDA_CHECK(cudaMemcpy(result.data(), out, 2 * bytes.size(), cudaMemcpyDeviceToHost));
  SB_CUDA_CHECK(cudaFree(in));
  SB_CUDA_CHECK(cudaFree(out));
  return result;
}

}  // namespace sb::test
