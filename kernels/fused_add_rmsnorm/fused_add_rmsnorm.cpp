#include "fused_add_rmsnorm/fused_add_rmsnorm.h"

#include <stdexcept>

#include "common/validate.h"

namespace sb::fused_add_rmsnorm {

#define SB_OP_NAME "fused_add_rmsnorm"
#define SB_OP_VARIANTS_DEF "fused_add_rmsnorm/variants.def"
#include "common/variant_registry.inc"

void Problem::validate() const {
  constexpr const char* kOp = "fused_add_rmsnorm";
  validate_norm_shape(kOp, rows, hidden, eps, dtype);
  if (!x) invalid(kOp, "x is null");
  if (!residual) invalid(kOp, "residual is null");
  if (!w) invalid(kOp, "w is null");
  // Both outputs are written in place, each element by the thread that read it; overlapping buffers would
  // make one output overwrite the other's input (w: the weights other rows still read).
  const std::size_t elem = size_bytes(dtype), tensor = static_cast<std::size_t>(rows * hidden) * elem,
                    w_bytes = static_cast<std::size_t>(hidden) * elem;
  if (overlaps(x, tensor, residual, tensor)) invalid(kOp, "x and residual overlap (alias): they must be distinct buffers");
  if (overlaps(w, w_bytes, x, tensor)) invalid(kOp, "w overlaps x");
  if (overlaps(w, w_bytes, residual, tensor)) invalid(kOp, "w overlaps residual");
}

}  // namespace sb::fused_add_rmsnorm
