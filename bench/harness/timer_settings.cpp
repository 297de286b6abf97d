#include "harness/timer_settings.h"

#include <string>

#include "harness/cli.h"

namespace sb::bench {

namespace {
constexpr unsigned long long kMaxFlushBytes = 1ull << 40;  // far past any L2; a typo's size is refused
}  // namespace

const char* flush_method_name(FlushMethod m) {
  switch (m) {
    case FlushMethod::memset: return "memset";
    case FlushMethod::kernel: return "kernel";
    case FlushMethod::read: return "read";
  }
  return "memset";  // not reached: every FlushMethod is named above
}

const char* hot_timing_name(HotTiming h) {
  switch (h) {
    case HotTiming::graph: return "graph";
    case HotTiming::marginal: return "marginal";
    case HotTiming::net: return "net";
  }
  return "graph";  // not reached: every HotTiming is named above
}

TimerSettings TimerSettings::from_env(const std::function<const char*(const char*)>& get) {
  TimerSettings s;
  if (const char* v = get("SOLBENCH_FLUSH_BYTES"))
    s.flush_bytes = static_cast<std::size_t>(setting_count("SOLBENCH_FLUSH_BYTES", v, 1, kMaxFlushBytes,
                                                           "a positive byte count up to 1 TiB"));
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
  if (const char* v = get("SOLBENCH_REST_MS"))
    s.rest_ms = static_cast<double>(setting_count("SOLBENCH_REST_MS", v, 0, 10000, "whole milliseconds from 0 to 10000"));
  if (const char* v = get("SOLBENCH_MIN_HOLD_US"))
    s.min_hold_us =
        static_cast<double>(setting_count("SOLBENCH_MIN_HOLD_US", v, 0, 1000, "whole microseconds from 0 to 1000"));
  if (const char* v = get("SOLBENCH_PERSISTING_RESET")) {
    const std::string r = v;
    if (r != "on" && r != "off") bad_setting("SOLBENCH_PERSISTING_RESET", "'on' or 'off'", v);
    s.reset_persisting = r == "on";
  }
  if (const char* v = get("SOLBENCH_WARMUP_SIZING")) {
    const std::string w = v;
    if (w != "median" && w != "last") bad_setting("SOLBENCH_WARMUP_SIZING", "'median' or 'last'", v);
    s.size_from_median = w == "median";
  }
  if (const char* v = get("SOLBENCH_HOT_TIMING")) {
    const std::string h = v;
    if (h == "graph") s.hot_timing = HotTiming::graph;
    else if (h == "marginal") s.hot_timing = HotTiming::marginal;
    else if (h == "net") s.hot_timing = HotTiming::net;
    else bad_setting("SOLBENCH_HOT_TIMING", "'graph', 'marginal' or 'net'", v);
  }
  if (const char* v = get("SOLBENCH_HOT_WINDOW_US"))
    s.hot_window_us = static_cast<double>(
        setting_count("SOLBENCH_HOT_WINDOW_US", v, 10, 5000, "whole microseconds from 10 to 5000"));
  // The reset waits for the launch before it; the continuous queue keeps one batch in flight.
  if (s.reset_persisting && s.continuous_queue)
    bad_setting("SOLBENCH_COLD_QUEUE",
                "'batched' while SOLBENCH_PERSISTING_RESET is 'on' (set it to 'off' for a continuous queue)", "continuous");
  return s;
}

}  // namespace sb::bench
