// The suite's own command-line flags, taken out of argv before Google Benchmark sees the rest.
// Anything neither we nor Google Benchmark know is an error: message on stderr, exit code 2.
#pragma once

#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/dtype.h"

namespace sb::bench {

// A bad flag or flag value. main() prints what() and exits with kUsageExit.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
inline constexpr int kUsageExit = 2;
// Exit status when no GPU is usable: ctest reports the smoke run as skipped (SKIP_RETURN_CODE).
inline constexpr int kNoGpuExit = 77;

struct Options {
  std::string shapes;   // --shapes=SPEC ("" = the binary's default set)
  std::vector<DType> dtypes{std::begin(kAllDTypes), std::end(kAllDTypes)};  // --dtypes=LIST, in kAllDTypes order
  bool profile = false;  // --profile: a fixed few launches per case, for ncu --nvtx
  bool list_only = false;  // --benchmark_list_tests given: register and list, touch no GPU
};

// Removes our flags from argv (updating argc) and returns them. Throws UsageError for a malformed one.
Options extract_options(int* argc, char** argv);

// Help for our flags; `shapes_grammar` is the op's own paragraph.
std::string options_help(const std::string& shapes_grammar);

// Splits "a,b,,c" into {"a","b","c"}; an empty list is a UsageError naming `flag`.
std::vector<std::string> split_list(const std::string& value, const std::string& flag);

// Parses a whole decimal integer in [lo, hi]; anything else is a UsageError naming `what`.
long long parse_int(const std::string& s, long long lo, long long hi, const std::string& what);

}  // namespace sb::bench
