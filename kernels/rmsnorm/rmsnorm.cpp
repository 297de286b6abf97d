#include "rmsnorm/rmsnorm.h"

#include <stdexcept>

#include "common/validate.h"

namespace sb::rmsnorm {

#define SB_OP_NAME "rmsnorm"
#define SB_OP_VARIANTS_DEF "rmsnorm/variants.def"
#include "common/variant_registry.inc"

void Problem::validate() const {
  validate_norm_shape("rmsnorm", rows, hidden, eps, dtype);
  if (!x) invalid("rmsnorm", "x is null");
  if (!w) invalid("rmsnorm", "w is null");
  if (!y) invalid("rmsnorm", "y is null");
}

}  // namespace sb::rmsnorm
