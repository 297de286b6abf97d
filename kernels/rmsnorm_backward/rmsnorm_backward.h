// RMSNorm backward, the gradients of y = x * rstd * w with rstd = rsqrt(mean(x^2) + eps), over rows x hidden,
// row-major, contiguous:
//   x̂ = x * rstd,  g = w * dy,  dx = rstd * (g - x̂ * mean(x̂ * g)),  dw = sum over rows of dy * x̂.
// x, w, dy, dx and dw share one dtype; every variant accumulates in fp32. dw is reduced in two steps that never
// use floating-point atomics: partial rows of fp32 sums in the workspace, then one fixed-order column
// reduction, so the same inputs give the same bits on every run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/registry.h"

namespace sb::rmsnorm_backward {

// Every variant writes at most min(rows, kMaxPartialRows) partial rows of dw (hidden fp32 sums each).
inline constexpr int64_t kMaxPartialRows = 1024;

struct Problem {
  int64_t rows = 0;
  int64_t hidden = 0;
  double eps = 1e-6;
  DType dtype = DType::bf16;
  const void* x = nullptr;      // [rows, hidden]
  const void* w = nullptr;      // [hidden]
  const void* dy = nullptr;     // [rows, hidden]
  const float* rstd = nullptr;  // [rows], the forward's saved 1/rms in fp32; nullptr: recomputed from x
  void* dx = nullptr;           // [rows, hidden]
  void* dw = nullptr;           // [hidden]
  void* workspace = nullptr;    // dw partials: workspace_size >= workspace_bytes(*this), 16-byte aligned
  std::size_t workspace_size = 0;

  // The least traffic any implementation can have: read x, dy and w once (and rstd when given), write dx and
  // dw once: (3 * rows * hidden + 2 * hidden) * sizeof(dtype) + (rstd ? 4 * rows : 0). The workspace's
  // partials are not counted: an implementation's overhead, not the problem's.
  std::size_t bytes() const {
    return static_cast<std::size_t>(3 * rows * hidden + 2 * hidden) * size_bytes(dtype) +
           (rstd ? static_cast<std::size_t>(4 * rows) : 0);
  }
  // Per element: x*x and its sum (only without a saved rstd); w*dy, x*g and its sum; x*rstd, *mean, the
  // difference, *rstd (dx); dy*x̂ and its sum (dw): 11, or 9 with rstd given. Per-row rsqrt not counted.
  double flops() const {
    return (rstd ? 9.0 : 11.0) * static_cast<double>(rows) * static_cast<double>(hidden);
  }

  // Throws std::invalid_argument naming the offending field.
  void validate() const;
};

// The workspace every variant of the op can run `p` in: min(rows, kMaxPartialRows) * hidden fp32 values.
std::size_t workspace_bytes(const Problem& p);

// variants(), variant(name), best_variant(p) and run(v, p, stream) over kernels/rmsnorm_backward/variants.def.
// best_variant: persistent, else two_kernel, which takes any valid problem.
#include "common/variant_api.inc"

// The rows each block of two_kernel's first kernel owns: at least 32, a multiple of 32, and enough that
// ceil(rows / chunk) <= kMaxPartialRows (exposed for the CPU tests of the workspace bound).
int64_t two_kernel_chunk_rows(int64_t rows);

// persistent's per-thread share of a row: `vec` elements an access (16 bytes' worth, or 1 when hidden is not
// a multiple of it), `vectors_per_thread` accesses, `block_threads` threads (a multiple of 32, <= 512).
// vectors_per_thread == 0: the row does not fit the registers of one block (hidden > 512 * 32).
struct PersistentConfig {
  int vec;
  int vectors_per_thread;
  int block_threads;
};
PersistentConfig persistent_config(int64_t hidden, DType dtype);

}  // namespace sb::rmsnorm_backward
