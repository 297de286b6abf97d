// The speed of light of the GPU in hand, measured once per process at start-up, so every % of SoL
// compares against the same run's hardware rather than a datasheet.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace sb::bench {

struct Ceilings {
  double copy_gbps = 0;    // device-to-device copy of 1 GiB, bytes read + bytes written, 16-byte vector kernel
  double gemm_tflops = 0;  // cuBLAS bf16 GEMM (fp32 accumulate), n x n x n on N(0,1) data
};

// The copy kernel of the ceiling: 16-byte vector copy of `bytes` (a multiple of 16), 4 vectors a thread.
void launch_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t s);

// Median of `reps` timed launches of launch_copy over `bytes` (after warm-up).
double measure_copy_gbps(cudaStream_t s, std::size_t bytes, int reps = 20);
// The same copy through cudaMemcpyAsync, timed on its own: the independent check of the one above.
double measure_memcpy_gbps(cudaStream_t s, std::size_t bytes, int reps = 20);
// Median of `reps` cublasGemmEx calls, C = A * B, bf16 in and out, fp32 compute.
double measure_gemm_tflops(cudaStream_t s, int n = 8192, int reps = 10);

Ceilings measure_ceilings(cudaStream_t s);

}  // namespace sb::bench
