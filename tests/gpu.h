// GPU test binaries decide once, in their main (tests/gpu_main.cpp), whether a CUDA device is usable: without
// one they skip as a whole (exit kSkipExit, which ctest reads as Skipped) with one line that says why; with
// SOLBENCH_REQUIRE_GPU=1 (set by the GPU script) a missing device is a failure instead, so a broken driver can
// never pass as "skipped". SB_REQUIRE_GPU() makes the same decision for one test (where the main found a
// device, it passes).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "harness/device.h"  // the GPU tests' DeviceBuffer and Stream

namespace sb::test {

// ctest's SKIP_RETURN_CODE for the GPU binaries (tests/CMakeLists.txt); 77 is the Automake convention.
inline constexpr int kSkipExit = 77;

// "" when a CUDA device is usable, else "no CUDA device: <the runtime's words>". Where the runtime reports no
// driver or no device and this machine has no NVIDIA device node or no driver library, it reads "no CUDA
// device (no NVIDIA driver or GPU on this machine): ...", so that a machine without a GPU is not sent to
// update a driver it does not have. Probed once per process.
const std::string& no_gpu_reason();

// SOLBENCH_REQUIRE_GPU is set to something other than "" or "0".
bool gpu_required();

}  // namespace sb::test

#define SB_REQUIRE_GPU()                                     \
  do {                                                       \
    const std::string& sb_why = ::sb::test::no_gpu_reason(); \
    if (!sb_why.empty()) {                                   \
      if (::sb::test::gpu_required()) FAIL() << sb_why;      \
      GTEST_SKIP() << sb_why;                                \
    }                                                        \
  } while (0)
