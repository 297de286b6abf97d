#include "harness/ceilings.h"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "harness/device.h"
#include "harness/fill.h"
#include "harness/timer.h"

namespace sb::bench {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

double median_ms(GpuTimer& timer, const LaunchFn& launch, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) launch(timer.stream());
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) ms.push_back(timer.cold_ms(launch));
  return median(ms);
}

void cublas_check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: " + cublasGetStatusString(st));
}

}  // namespace

double measure_copy_gbps(cudaStream_t s, std::size_t bytes, int reps) {
  DeviceBuffer src(bytes), dst(bytes);
  fill_normal(src.get(), bytes / 4, DType::f32, 2, 0.0f, 1.0f, s);
  GpuTimer timer(s);
  const double ms = median_ms(timer, [&](cudaStream_t st) {
    SB_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, st));
  }, 3, reps);
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
}

double measure_copy_gbps_host_clock(cudaStream_t s, std::size_t bytes, int reps) {
  DeviceBuffer src(bytes), dst(bytes);
  fill_normal(src.get(), bytes / 4, DType::f32, 3, 0.0f, 1.0f, s);
  for (int i = 0; i < 3; ++i) SB_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
  SB_CUDA_CHECK(cudaStreamSynchronize(s));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) SB_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
  SB_CUDA_CHECK(cudaStreamSynchronize(s));
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 2.0 * static_cast<double>(bytes) * reps / sec / 1e9;
}

double measure_gemm_tflops(cudaStream_t s, int n, int reps) {
  const std::size_t elems = std::size_t(n) * n;
  DeviceBuffer a(elems * 2), b(elems * 2), c(elems * 2);
  fill_normal(a.get(), elems, DType::bf16, 3, 0.0f, 1.0f, s);
  fill_normal(b.get(), elems, DType::bf16, 4, 0.0f, 1.0f, s);
  cublasHandle_t h = nullptr;
  cublas_check(cublasCreate(&h), "cublasCreate");
  double ms = 0;
  try {
    cublas_check(cublasSetStream(h, s), "cublasSetStream");
    const float alpha = 1.0f, beta = 0.0f;
    GpuTimer timer(s);
    ms = median_ms(timer, [&](cudaStream_t) {
      cublas_check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.get(), CUDA_R_16BF, n, b.get(),
                                CUDA_R_16BF, n, &beta, c.get(), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx");
    }, 3, reps);
  } catch (...) {
    cublasDestroy(h);
    throw;
  }
  cublasDestroy(h);
  return 2.0 * n * double(n) * n / (ms * 1e-3) / 1e12;
}

double measure_gemm_fp8_tflops(cudaStream_t s, std::string* why, int n, int reps) {
  const std::size_t elems = std::size_t(n) * n, workspace_bytes = std::size_t{32} << 20;
  DeviceBuffer a(elems), b(elems), d(elems * 2), staging(elems * 2), workspace(workspace_bytes);
  for (auto [dst, seed] : {std::pair<void*, uint64_t>{a.get(), 5}, {b.get(), 6}}) {  // N(0, 1) rounded to e4m3
    fill_normal(staging.get(), elems, DType::bf16, seed, 0.0f, 1.0f, s);
    to_e4m3(staging.get(), elems, DType::bf16, 1.0f, dst, s);
  }
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  double tflops = 0;
  try {
    cublas_check(cublasLtCreate(&lt), "cublasLtCreate");
    cublas_check(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;  // FP8 takes A transposed (TN)
    cublas_check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose),
                 "CUBLASLT_MATMUL_DESC_TRANSA");
    cublas_check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none),
                 "CUBLASLT_MATMUL_DESC_TRANSB");
    cublas_check(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, n, n, n), "cublasLtMatrixLayoutCreate");
    cublas_check(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, n, n, n), "cublasLtMatrixLayoutCreate");
    cublas_check(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, n, n, n), "cublasLtMatrixLayoutCreate");
    cublas_check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    cublas_check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &workspace_bytes, sizeof workspace_bytes),
                 "CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES");
    cublasLtMatmulHeuristicResult_t algo{};
    int found = 0;
    const cublasStatus_t heuristic = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &algo, &found);
    if (heuristic != CUBLAS_STATUS_SUCCESS || found == 0) {
      *why = std::string("cuBLASLt offers no e4m3 GEMM here (") +
             (heuristic != CUBLAS_STATUS_SUCCESS ? cublasGetStatusString(heuristic) : "no algorithm") + ")";
    } else {
      const float alpha = 1.0f, beta = 0.0f;
      GpuTimer timer(s);
      const double ms = median_ms(timer, [&](cudaStream_t st) {
        cublas_check(cublasLtMatmul(lt, op, &alpha, a.get(), la, b.get(), lb, &beta, d.get(), ld, d.get(), ld,
                                    &algo.algo, workspace.get(), workspace_bytes, st),
                     "cublasLtMatmul");
      }, 3, reps);
      tflops = 2.0 * n * double(n) * n / (ms * 1e-3) / 1e12;
    }
  } catch (const std::runtime_error& e) {
    *why = e.what();
  }
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  for (cublasLtMatrixLayout_t l : {la, lb, ld})
    if (l) cublasLtMatrixLayoutDestroy(l);
  if (op) cublasLtMatmulDescDestroy(op);
  if (lt) cublasLtDestroy(lt);
  return tflops;
}

Ceilings measure_ceilings(cudaStream_t s) {
  Ceilings c;
  c.copy_gbps = measure_copy_gbps(s, std::size_t{1} << 30);
  c.gemm_tflops = measure_gemm_tflops(s);
  const int cc = device_info().cc_major * 10 + device_info().cc_minor;
  if (cc >= 89)
    c.gemm_fp8_tflops = measure_gemm_fp8_tflops(s, &c.gemm_fp8_note);
  else
    c.gemm_fp8_note = "no FP8 tensor cores before sm_89";
  return c;
}

}  // namespace sb::bench
