// The outcome of verifying one case against its reference, shared by every op's problem data.
#pragma once

#include <map>
#include <string>

namespace sb::bench {

struct Check {
  bool ok = false;
  double err = 0;  // the case's error as a fraction of its tolerance: <= 1 passes
  std::string message;
};

// The outcome of each case's one verification, keyed by the case name less its mode: the first repetition of
// either mode verifies, every later one reuses the outcome.
class VerifiedCases {
 public:
  template <typename Verify>
  const Check& get(const std::string& base, Verify&& verify) {
    auto it = checks_.find(base);
    if (it == checks_.end()) it = checks_.emplace(base, verify()).first;
    return it->second;
  }

 private:
  std::map<std::string, Check> checks_;
};

}  // namespace sb::bench
