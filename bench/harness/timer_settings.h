// The cold protocol's experiment settings, read from the environment (SOLBENCH_*): plain C++, so that
// their parsing is tested without a GPU. GpuTimer reads them once when it is made; the run context
// records each (timer.h documents what they change).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <functional>

namespace sb::bench {

enum class FlushMethod { memset, kernel, read };
const char* flush_method_name(FlushMethod m);  // "memset", "kernel", "read"

// How a hot case's time per launch is taken (GpuTimer::hot_timing, timer.h, says what each does).
enum class HotTiming { graph, marginal, net };
const char* hot_timing_name(HotTiming h);  // "graph", "marginal", "net"

// The window a hot graph's K launches are sized to fill by default (hot_launch_count, timer.h): ~50 us, where
// event resolution is ~0.5 us. SOLBENCH_HOT_WINDOW_US changes it for experiments.
constexpr double kHotWindowUs = 50;

struct TimerSettings {
  std::size_t flush_bytes = 0;  // SOLBENCH_FLUSH_BYTES: a positive byte count; 0 = the L2's size
  FlushMethod flush_method = FlushMethod::memset;  // SOLBENCH_FLUSH_METHOD
  bool hold_before_flush = false;                  // SOLBENCH_COLD_HOLD: after-flush | before-flush
  bool continuous_queue = false;                   // SOLBENCH_COLD_QUEUE: batched | continuous
  double rest_ms = 0;                              // SOLBENCH_REST_MS: whole milliseconds, 0 to 10000
  double min_hold_us = 0;                          // SOLBENCH_MIN_HOLD_US: whole microseconds, 0 to 1000
  bool reset_persisting = true;                    // SOLBENCH_PERSISTING_RESET: on | off
  bool size_from_median = true;                    // SOLBENCH_WARMUP_SIZING: median | last
  HotTiming hot_timing = HotTiming::net;           // SOLBENCH_HOT_TIMING: net | graph | marginal
  double hot_window_us = kHotWindowUs;             // SOLBENCH_HOT_WINDOW_US: whole microseconds, 10 to 5000

  // Each variable that `get` returns (std::getenv by default) parsed; an empty or bad value, or two
  // settings that exclude each other, throws std::invalid_argument naming the variable, what it takes
  // and what it got.
  static TimerSettings from_env(const std::function<const char*(const char*)>& get = [](const char* n) {
    return static_cast<const char*>(std::getenv(n));
  });
};

}  // namespace sb::bench
