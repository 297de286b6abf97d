// bench_e2e's training-step cases (train_bench.cpp): built only with libtorch, no torch type here.
#pragma once

#include <functional>
#include <vector>

#include "train_config.h"

namespace sb::bench {

// Registers e2e/train_step/<impl>/bf16/<config>/cold for every config and each TrainNorm (train_model.h).
// make_room() drops what the binary keeps on the device for other cases (bench_e2e's resident layers): a case
// whose model runs out of memory beside them calls it and tries once more (a 1b step takes most of an 80 GB
// GPU; the small one fits beside anything).
void register_train_cases(const std::vector<TrainConfig>& configs, std::function<void()> make_room);

}  // namespace sb::bench
