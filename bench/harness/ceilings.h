// The speed of light of the GPU in hand, measured once per process at start-up, so every % of SoL
// compares against the same run's hardware rather than a datasheet.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace sb::bench {

struct Ceilings {
  double copy_gbps = 0;    // device-to-device cudaMemcpyAsync of 1 GiB, bytes read + bytes written
  double gemm_tflops = 0;  // cuBLAS bf16 GEMM (fp32 accumulate), n x n x n on N(0,1) data
  // cuBLASLt FP8 (e4m3) GEMM, bf16 out, fp32 accumulate, n x n x n: the ceiling of FP8 compute. 0 where the
  // GPU or cuBLASLt has none (gemm_fp8_note says why).
  double gemm_fp8_tflops = 0;
  std::string gemm_fp8_note;
};

// The copy ceiling: median of `reps` cold cudaMemcpyAsync device-to-device copies of `bytes`, timed
// with GpuTimer. The vendor's copy, because it outruns a grid-stride kernel of 16-byte accesses on the H200.
double measure_copy_gbps(cudaStream_t s, std::size_t bytes, int reps = 20);
// The same copies timed by the host clock around `reps` back-to-back calls and one synchronize: no
// events, no flush. The self-test's independent check of the timer.
double measure_copy_gbps_host_clock(cudaStream_t s, std::size_t bytes, int reps = 20);
// Median of `reps` cublasGemmEx calls, C = A * B, bf16 in and out, fp32 compute.
double measure_gemm_tflops(cudaStream_t s, int n = 8192, int reps = 10);
// Median of `reps` cublasLtMatmul calls, D = A^T B, A and B e4m3 (N(0, 1) rounded), D bf16, fp32 compute, the
// first algorithm cuBLASLt's heuristic gives (32 MiB of workspace). 0, with the reason in *why, where there is
// none (a GPU before sm_89) or cuBLASLt refuses.
double measure_gemm_fp8_tflops(cudaStream_t s, std::string* why, int n = 8192, int reps = 10);

Ceilings measure_ceilings(cudaStream_t s);

}  // namespace sb::bench
