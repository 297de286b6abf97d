// Fused residual-add + RMSNorm, in place (the vLLM / TensorRT-LLM convention), over rows x hidden, row-major,
// contiguous:
//   residual[r, :] = x[r, :] + residual[r, :]                         (rounded to the dtype)
//   x[r, :]        = residual[r, :] * rsqrt(mean(residual[r, :]^2) + eps) * w
// The normalization reads the rounded sum that is stored, as vLLM's fused_add_rms_norm does. x, residual and w
// share one dtype; every variant adds and accumulates in fp32 and rounds each output once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/registry.h"

namespace sb::fused_add_rmsnorm {

struct Problem {
  int64_t rows = 0, hidden = 0;
  double eps = 1e-6;
  DType dtype = DType::bf16;
  void* x = nullptr;         // [rows, hidden] in: the sublayer's output; out: the normalized row times w
  void* residual = nullptr;  // [rows, hidden] in: the residual stream; out: x + residual
  const void* w = nullptr;   // [hidden]

  // The least traffic any implementation can have: read x, residual and w once, write residual and x once:
  // (4 * rows * hidden + hidden) * sizeof(dtype). Both the residual's read and its write count.
  std::size_t bytes() const { return (4 * rows * hidden + hidden) * size_bytes(dtype); }
  // The add, then RMSNorm's x*x, the sum, *rstd, *w: 5 per element (the per-row rsqrt is not counted).
  double flops() const { return 5.0 * static_cast<double>(rows) * static_cast<double>(hidden); }

  // Throws std::invalid_argument naming the offending field; x, residual and w must not overlap.
  void validate() const;
};

// variants(), variant(name), best_variant(p) and run(v, p, stream) over kernels/fused_add_rmsnorm/variants.def.
// best_variant: vectorized, else two_pass, which takes any valid problem.
#include "common/variant_api.inc"

}  // namespace sb::fused_add_rmsnorm
