#include "pdl_probe.h"

#include <stdexcept>

#include "common/check.h"
#include "common/pdl.cuh"

namespace sb::test {
namespace {

__global__ void negate_after_spin_kernel(unsigned char* x, int64_t n, int elem_bytes, long long spin_cycles) {
  pdl_launch_dependents();
  const long long start = clock64();
  while (clock64() - start < spin_cycles) {
  }
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    x[i * elem_bytes + elem_bytes - 1] ^= 0x80;  // the sign bit sits in the highest byte
}

}  // namespace

void negate_after_spin(void* x, int64_t n, int elem_bytes, long long spin_cycles, cudaStream_t stream) {
  if (elem_bytes != 2 && elem_bytes != 4) throw std::invalid_argument("negate_after_spin: elem_bytes must be 2 or 4");
  constexpr int kBlocks = 128, kThreads = 256;  // any grid works (grid-stride); every block spins alike
  negate_after_spin_kernel<<<kBlocks, kThreads, 0, stream>>>(static_cast<unsigned char*>(x), n, elem_bytes,
                                                               spin_cycles);
  SB_LAUNCH_CHECK();
}

}  // namespace sb::test
