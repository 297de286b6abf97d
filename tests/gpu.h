// GPU tests skip, with the reason, where no CUDA device is usable; with SOLBENCH_REQUIRE_GPU=1 (set by
// the GPU script) a missing device is a failure instead, so a broken driver can never pass as "skipped".
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/device.h"

#define SB_REQUIRE_GPU()                                                           \
  do {                                                                             \
    const std::string sb_why = ::sb::bench::gpu_unavailable_reason();              \
    if (!sb_why.empty()) {                                                         \
      if (std::getenv("SOLBENCH_REQUIRE_GPU")) FAIL() << "no GPU: " << sb_why;     \
      GTEST_SKIP() << "no CUDA device: " << sb_why;                                \
    }                                                                              \
  } while (0)
