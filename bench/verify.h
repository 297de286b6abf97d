// The outcome of verifying one case against its reference, shared by every op's problem data.
#pragma once

#include <string>

namespace sb::bench {

struct Check {
  bool ok = false;
  double err = 0;  // the case's error as a fraction of its tolerance: <= 1 passes
  std::string message;
};

}  // namespace sb::bench
