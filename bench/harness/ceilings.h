// The speed of light of the GPU in hand, measured once per process at start-up, so every % of SoL
// compares against the same run's hardware rather than a datasheet.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace sb::bench {

struct Ceilings {
  double copy_gbps = 0;    // device-to-device cudaMemcpyAsync of 1 GiB, bytes read + bytes written
  double gemm_tflops = 0;  // cuBLAS bf16 GEMM (fp32 accumulate), n x n x n on N(0,1) data
};

// The copy ceiling: median of `reps` cold cudaMemcpyAsync device-to-device copies of `bytes`, timed
// with GpuTimer. The vendor's copy, because it outruns a grid-stride kernel of 16-byte accesses on the H200.
double measure_copy_gbps(cudaStream_t s, std::size_t bytes, int reps = 20);
// The same copies timed by the host clock around `reps` back-to-back calls and one synchronize: no
// events, no flush. The self-test's independent check of the timer.
double measure_copy_gbps_host_clock(cudaStream_t s, std::size_t bytes, int reps = 20);
// Median of `reps` cublasGemmEx calls, C = A * B, bf16 in and out, fp32 compute.
double measure_gemm_tflops(cudaStream_t s, int n = 8192, int reps = 10);

Ceilings measure_ceilings(cudaStream_t s);

}  // namespace sb::bench
