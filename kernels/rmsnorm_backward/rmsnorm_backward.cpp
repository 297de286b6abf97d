#include "rmsnorm_backward/rmsnorm_backward.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "common/validate.h"

namespace sb::rmsnorm_backward {

#define SB_OP_NAME "rmsnorm_backward"
#define SB_OP_VARIANTS_DEF "rmsnorm_backward/variants.def"
#include "common/variant_registry.inc"

std::size_t workspace_bytes(const Problem& p) {
  if (p.rows <= 0 || p.hidden <= 0) return 0;
  return static_cast<std::size_t>(std::min(p.rows, kMaxPartialRows)) * static_cast<std::size_t>(p.hidden) *
         sizeof(float);
}

void Problem::validate() const {
  constexpr const char* kOp = "rmsnorm_backward";
  validate_norm_shape(kOp, rows, hidden, eps, dtype);
  if (!x) invalid(kOp, "x is null");
  if (!w) invalid(kOp, "w is null");
  if (!dy) invalid(kOp, "dy is null");
  if (!dx) invalid(kOp, "dx is null");
  if (!dw) invalid(kOp, "dw is null");
  if (!workspace) invalid(kOp, "workspace is null (workspace_bytes() gives its size)");
  if (reinterpret_cast<std::uintptr_t>(workspace) % 16 != 0) invalid(kOp, "workspace must be 16-byte aligned");
  if (workspace_size < workspace_bytes(*this))
    invalid(kOp, "workspace_size " + std::to_string(workspace_size) + " < workspace_bytes() " +
                     std::to_string(workspace_bytes(*this)));
}

int64_t two_kernel_chunk_rows(int64_t rows) {
  const int64_t need = (rows + kMaxPartialRows - 1) / kMaxPartialRows;
  return std::max<int64_t>(32, (need + 31) / 32 * 32);
}

PersistentConfig persistent_config(int64_t hidden, DType dtype) {
  constexpr int kMaxThreads = 512;
  const int vec16 = 16 / static_cast<int>(size_bytes(dtype));
  PersistentConfig c{};
  c.vec = hidden % vec16 == 0 ? vec16 : 1;
  const int64_t vectors = hidden / c.vec;
  // A thread keeps its x, dy and fp32 dw partial in registers, within the 128 registers a thread of a
  // 512-thread block has: 32 elements for 16-bit 16-byte accesses (x and dy packed two to a register), 16
  // for fp32 ones, 8 scalar ones (each access its own address registers: 16 spill). The fewest accesses a
  // thread that hold the row (the most threads, up to 512).
  const int max_elements = c.vec == 8 ? 32 : c.vec == 4 ? 16 : 8;
  for (int v = 1; v * c.vec <= max_elements; v *= 2) {
    if (vectors <= int64_t{kMaxThreads} * v) {
      c.vectors_per_thread = v;
      const int64_t threads = (vectors + v - 1) / v;
      c.block_threads = static_cast<int>((threads + 31) / 32 * 32);
      return c;
    }
  }
  c.vectors_per_thread = 0;
  c.block_threads = 0;
  return c;
}

}  // namespace sb::rmsnorm_backward
