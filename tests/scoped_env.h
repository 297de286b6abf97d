// Test helper: an environment variable set for a scope (a case's data reads SOLBENCH_KV_GAP when it is
// made), its previous value or absence restored after.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace sb::bench {

class ScopedEnv {
 public:
  explicit ScopedEnv(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  bool set(const char* value) { return setenv(name_, value, 1) == 0; }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace sb::bench
