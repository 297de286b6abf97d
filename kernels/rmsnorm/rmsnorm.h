// RMSNorm forward: y[r, :] = x[r, :] * rsqrt(mean(x[r, :]^2) + eps) * w, over rows x hidden, row-major,
// contiguous. x, w and y share one dtype; every variant accumulates in fp32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/registry.h"

namespace sb::rmsnorm {

struct Problem {
  int64_t rows = 0;
  int64_t hidden = 0;
  double eps = 1e-6;
  DType dtype = DType::bf16;
  const void* x = nullptr;  // [rows, hidden]
  const void* w = nullptr;  // [hidden]
  void* y = nullptr;        // [rows, hidden]

  // The least traffic any implementation can have: read x and w once, write y once.
  std::size_t bytes() const { return (2 * rows * hidden + hidden) * size_bytes(dtype); }
  // x*x, the sum, x*rstd, *w: 4 per element (the per-row rsqrt is not counted).
  double flops() const { return 4.0 * static_cast<double>(rows) * static_cast<double>(hidden); }

  // Throws std::invalid_argument naming the offending field.
  void validate() const;
};

// variants(), variant(name), best_variant(p) and run(v, p, stream) over kernels/rmsnorm/variants.def.
// best_variant: vectorized, else the variant before it that supports p (naive takes any valid problem).
#include "common/variant_api.inc"

// Launch geometry of the vectorized variant: a pure function of the shape and dtype, exposed for its CPU
// unit tests (kernels/rmsnorm/vectorized.cu says what each regime does and why).
enum class VectorizedRegime {
  decode,     // <= 256 rows of 16-byte vectors, 32 vectors to 8192 elements: a block of whole warps a row
  latency,    // other problems of <= 256 rows: the most threads a row; w staged in shared memory
  bandwidth,  // > 256 rows: up to 8 vectors a thread (4 for 8-16 KB rows); w staged in shared memory to 8 KB
  two_pass,   // any row count, rows longer than 512 threads x 8 vectors: a 1024-thread block a row, x read twice
};
struct VectorizedConfig {
  VectorizedRegime regime;
  int vec;              // elements per access: 16 bytes' worth, or 1 (scalar) when hidden is not a multiple
  int vectors_per_thread;  // 1, 2, 4 or 8: the part of the row a thread keeps in registers; 0 = two-pass
  int threads_per_row;     // a power of two, 1..512 (32..512 for decode, 1024 for two-pass)
  int rows_per_block;
  int block_threads;
  bool stage_w = false;  // w copied to shared memory with cp.async alongside the x loads (16-byte vectors only)
};
VectorizedConfig vectorized_config(int64_t rows, int64_t hidden, DType dtype);
// The blocks a decode row is split over on a GPU of sm_count SMs: 4 where rows x 4 <= sm_count, else 2 where
// rows x 2 <= sm_count, for a row of exactly threads_per_row x 4 16-byte vectors; 1 otherwise (and in the
// other regimes). Each block of a row reads all of x and writes its part of y (kernels/rmsnorm/vectorized.cu).
int vectorized_blocks_per_row(const VectorizedConfig& c, int64_t rows, int64_t hidden, int sm_count);

}  // namespace sb::rmsnorm
