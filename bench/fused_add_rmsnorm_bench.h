// bench_rmsnorm's fused residual-add + RMSNorm cases (bench/fused_add_rmsnorm_bench.cpp).
#pragma once

#include <vector>

#include "harness/cli.h"
#include "rmsnorm_shapes.h"

namespace sb::bench {

// Registers fused_add_rmsnorm/<impl>/<dtype>/t<rows>_h<hidden>/<cold|hot> for every shape and opt.dtypes.
void register_fused_add_rmsnorm_cases(const Options& opt, const std::vector<RmsNormShape>& shapes);

}  // namespace sb::bench
