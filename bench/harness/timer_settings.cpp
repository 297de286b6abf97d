#include "harness/timer_settings.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "harness/cli.h"

namespace sb::bench {

const char* flush_method_name(FlushMethod m) {
  switch (m) {
    case FlushMethod::memset: return "memset";
    case FlushMethod::kernel: return "kernel";
    case FlushMethod::read: return "read";
  }
  return "memset";  // not reached: every FlushMethod is named above
}

TimerSettings TimerSettings::from_env(const std::function<const char*(const char*)>& get) {
  TimerSettings s;
  if (const char* v = get("SOLBENCH_FLUSH_BYTES")) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (!*v || *end || *v == '-' || n == 0) bad_setting("SOLBENCH_FLUSH_BYTES", "a positive byte count", v);
    s.flush_bytes = static_cast<std::size_t>(n);
  }
  if (const char* v = get("SOLBENCH_FLUSH_METHOD")) {
    const std::string m = v;
    if (m == "memset") s.flush_method = FlushMethod::memset;
    else if (m == "kernel") s.flush_method = FlushMethod::kernel;
    else if (m == "read") s.flush_method = FlushMethod::read;
    else bad_setting("SOLBENCH_FLUSH_METHOD", "'memset', 'kernel' or 'read'", v);
  }
  if (const char* v = get("SOLBENCH_COLD_HOLD")) {
    const std::string h = v;
    if (h != "after-flush" && h != "before-flush") bad_setting("SOLBENCH_COLD_HOLD", "'after-flush' or 'before-flush'", v);
    s.hold_before_flush = h == "before-flush";
  }
  if (const char* v = get("SOLBENCH_COLD_QUEUE")) {
    const std::string q = v;
    if (q != "batched" && q != "continuous") bad_setting("SOLBENCH_COLD_QUEUE", "'batched' or 'continuous'", v);
    s.continuous_queue = q == "continuous";
  }
  if (const char* v = get("SOLBENCH_REST_MS")) {
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (!*v || *end || n < 0 || n > 10000) bad_setting("SOLBENCH_REST_MS", "whole milliseconds from 0 to 10000", v);
    s.rest_ms = static_cast<double>(n);
  }
  return s;
}

}  // namespace sb::bench
