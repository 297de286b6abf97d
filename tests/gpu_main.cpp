// The main of the GPU test binaries: one device probe per binary instead of one per test. Without a usable
// device the binary prints "<binary>: SKIPPED: no CUDA device: <why>" and exits kSkipExit, or, with
// SOLBENCH_REQUIRE_GPU=1, "<binary>: FAILED: ..." and exits 1. Listing the tests (--gtest_list_tests, as
// scripts/sanitize.sh does) and --help need no device.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gpu.h"
#include "harness/device.h"

namespace sb::test {
namespace {

std::string probe() {
  const std::string why = ::sb::bench::gpu_unavailable_reason();
  return why.empty() ? why : "no CUDA device: " + why;
}

bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    for (const char* h : {"--help", "-h", "-?", "/?", "--gtest_help"}) {
      if (std::strcmp(argv[i], h) == 0) return true;
    }
  }
  return false;
}

}  // namespace

const std::string& no_gpu_reason() {
  static const std::string why = probe();
  return why;
}

bool gpu_required() {
  const char* v = std::getenv("SOLBENCH_REQUIRE_GPU");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

}  // namespace sb::test

int main(int argc, char** argv) {
  const bool help = sb::test::asks_for_help(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (help || GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  if (const std::string& why = sb::test::no_gpu_reason(); !why.empty()) {
    const char* slash = std::strrchr(argv[0], '/');
    const char* binary = slash != nullptr ? slash + 1 : argv[0];
    if (sb::test::gpu_required()) {
      std::fprintf(stderr, "%s: FAILED: %s (SOLBENCH_REQUIRE_GPU is set)\n", binary, why.c_str());
      return 1;
    }
    std::printf("%s: SKIPPED: %s\n", binary, why.c_str());
    return sb::test::kSkipExit;
  }
  return RUN_ALL_TESTS();
}
