// A variant of an op is one .cu file with `supports` and `launch`, plus one SB_VARIANT line in the op's
// variants.def. The op's registry expands that file with an X-macro into a static array, so the build
// (CMake reads the same file), the benchmarks and the tests all see the same list, in teaching order.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace sb {

template <typename Problem>
struct Variant {
  const char* name;
  const char* summary;
  // "" when the variant can run the (valid) problem, else the reason it cannot.
  std::string (*supports)(const Problem&);
  // Enqueues the kernel(s) on `stream`. Never allocates, synchronizes, prints or reads a clock.
  void (*launch)(const Problem&, cudaStream_t);
};

}  // namespace sb
