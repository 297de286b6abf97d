// CPU tests of the harness's pure functions: the hot-mode launch count, the NVTX name mapping and
// the RMSNorm verification tolerance. No GPU needed.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/device.h"
#include "harness/gbench.h"
#include "harness/nvtx.h"
#include "harness/resident.h"
#include "harness/timer.h"
#include "harness/timer_settings.h"
#include "rmsnorm_case.h"

namespace sb::bench {
namespace {

// The resident set drops the least recently used first, calls on_drop before each drop (never at exit),
// and keeps an object larger than the budget alone while it is the one in use.
TEST(ResidentSet, DropsTheLeastRecentlyUsedBeyondTheBudget) {
  std::vector<std::string> dropped;
  ResidentSet<int> set(100, [&](const std::string& key, int& v) { dropped.push_back(key + "=" + std::to_string(v)); });
  EXPECT_EQ(set.find("a"), nullptr);
  set.insert("a", std::make_unique<int>(1), 40);
  set.insert("b", std::make_unique<int>(2), 40);
  EXPECT_EQ(set.resident_bytes(), 80u);
  ASSERT_NE(set.find("a"), nullptr);  // a is now the most recently used
  EXPECT_EQ(*set.find("a"), 1);
  set.insert("c", std::make_unique<int>(3), 40);  // 120 > 100: b goes
  EXPECT_EQ(dropped, (std::vector<std::string>{"b=2"}));
  EXPECT_EQ(set.find("b"), nullptr);
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(set.resident_bytes(), 80u);
  set.make_room(70);  // a was used before c: a, then c
  EXPECT_EQ(dropped, (std::vector<std::string>{"b=2", "a=1", "c=3"}));
  EXPECT_EQ(set.size(), 0u);
  set.insert("big", std::make_unique<int>(4), 500);  // alone over the budget: kept while in use
  EXPECT_EQ(*set.find("big"), 4);
  set.insert("d", std::make_unique<int>(5), 10);  // the big one goes first
  EXPECT_EQ(dropped.back(), "big=4");
  EXPECT_EQ(set.resident_bytes(), 10u);
  set.clear();
  EXPECT_EQ(dropped.back(), "d=5");
  EXPECT_EQ(set.resident_bytes(), 0u);
}

TEST(ResidentSet, ABudgetOfZeroKeepsOnlyTheLastOne) {
  int drops = 0;
  ResidentSet<int> set(0, [&](const std::string&, int&) { ++drops; });
  set.insert("a", std::make_unique<int>(1), 8);
  EXPECT_NE(set.find("a"), nullptr);
  set.insert("b", std::make_unique<int>(2), 8);
  EXPECT_EQ(set.find("a"), nullptr);
  EXPECT_NE(set.find("b"), nullptr);
  EXPECT_EQ(drops, 1);
  {
    ResidentSet<int> at_exit(0, [&](const std::string&, int&) { ++drops; });
    at_exit.insert("c", std::make_unique<int>(3), 8);
  }
  EXPECT_EQ(drops, 1);  // destroyed without on_drop
}

TEST(GpuUuid, FormattedAsNvidiaSmiNamesTheGpu) {
  // The UUID of the H200 that session 20's calls 2 and 3 ran on, as nvidia-smi --query-gpu=uuid printed it.
  const unsigned char bytes[16] = {0x16, 0xa6, 0x52, 0x9d, 0xa3, 0x6c, 0xcc, 0x66,
                                   0xfd, 0x50, 0xa1, 0xe2, 0xd2, 0x52, 0x13, 0x06};
  EXPECT_EQ(format_gpu_uuid(bytes), "GPU-16a6529d-a36c-cc66-fd50-a1e2d2521306");
  const unsigned char zeros[16] = {};
  EXPECT_EQ(format_gpu_uuid(zeros), "GPU-00000000-0000-0000-0000-000000000000");
}

TEST(NvidiaDriverVersion, ParsedFromBothModulesWordings) {
  // /proc/driver/nvidia/version's first line: the open kernel module (the H200 machines, 580.159.04)
  // and the proprietary one; the second line names the compiler, whose version must not be taken.
  EXPECT_EQ(parse_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release "
                               "Build  (dvs-builder@U16-I3-B03-4-3)  Thu Oct 30 2025\nGCC version:  gcc 12.2.0\n"),
            "580.159.04");
  EXPECT_EQ(parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 "
                               "UTC 2023\n"),
            "535.104.05");
  EXPECT_EQ(parse_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.10  Release\n"),
            "570.86.10");
  EXPECT_EQ(parse_nvrm_version(""), "");
  EXPECT_EQ(parse_nvrm_version("GCC version: gcc 12.2.0\nKernel Module 1.2\n"), "");  // not on the first line
  EXPECT_EQ(parse_nvrm_version("NVRM version: NVIDIA UNIX Kernel Module  Release\n"), "");
  // Whatever the machine, the function answers: a version, or "unknown (<why>)".
  const std::string v = nvidia_driver_version();
  EXPECT_FALSE(v.empty());
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(v.front())) || v.rfind("unknown (", 0) == 0) << v;
}

TEST(HotLaunchCount, FillsAFiftyMicrosecondWindowWithinBounds) {
  EXPECT_EQ(hot_launch_count(0.001), 50);   // 1 us kernels: 50 launches
  EXPECT_EQ(hot_launch_count(0.0025), 20);  // 2.5 us: 20
  EXPECT_EQ(hot_launch_count(1e-9), 100);   // never more than 100
  EXPECT_EQ(hot_launch_count(0.0), 100);
  EXPECT_EQ(hot_launch_count(5.0), 2);      // long kernels: still 2, so a replay is never one launch
  EXPECT_EQ(hot_launch_count(0.001, kHotWindowUs), hot_launch_count(0.001));
}

// SOLBENCH_HOT_WINDOW_US widens the window: a microsecond kernel, sized from its ~5 us warm launch (the host's
// launch call), gets K 10 at the default and 100 at 500 us; the bounds hold at any window.
TEST(HotLaunchCount, AWiderWindowGivesMicrosecondKernelsMoreLaunches) {
  EXPECT_EQ(hot_launch_count(0.005), 10);
  EXPECT_EQ(hot_launch_count(0.005, 500), 100);
  EXPECT_EQ(hot_launch_count(0.005, 200), 40);
  EXPECT_EQ(hot_launch_count(0.001, 5000), 100);  // still at most 100
  EXPECT_EQ(hot_launch_count(5.0, 5000), 2);      // a 5 ms launch: still 2
  EXPECT_EQ(hot_launch_count(0.5, 10), 2);        // the narrowest window: still 2
  for (double bad : {0.0, -50.0}) EXPECT_THROW(hot_launch_count(0.005, bad), std::invalid_argument);
}

TEST(ColdBatchCount, QueuesAboutAQuarterMillisecondOfLaunches) {
  EXPECT_EQ(cold_batch_count(0.010), GpuTimer::kMaxColdBatch);  // 10 us kernels: the most, 4
  EXPECT_EQ(cold_batch_count(0.1), 2);                          // 100 us: 2
  EXPECT_EQ(cold_batch_count(0.0), GpuTimer::kMaxColdBatch);
  EXPECT_EQ(cold_batch_count(0.25), 1);                         // 250 us and longer: one at a time
  EXPECT_EQ(cold_batch_count(50.0), 1);
}

TEST(Nvtx, CaseNamesBecomeRangeNamesNcuCanSelect) {
  EXPECT_EQ(nvtx_name("rmsnorm/vectorized/bf16/t1_h4096/cold"), "rmsnorm:vectorized:bf16:t1_h4096:cold");
  EXPECT_EQ(nvtx_name("a@b"), "a_b");
  EXPECT_STREQ(mode_name(Mode::cold), "cold");
  EXPECT_STREQ(mode_name(Mode::hot), "hot");
}

TEST(RmsNormTolerance, ScalesWithTheOutputDtypeAndTheRowLength) {
  // bf16: 4 unit roundoffs (2 ulps) of the output dominate.
  EXPECT_NEAR(rmsnorm_tolerance(DType::bf16, 4096, 1.0), 4 * 0x1p-8 + 0x1p-24 * (16 + 4 * 64), 1e-15);
  // fp32: the fp32 accumulation term, growing like sqrt(hidden), dominates.
  EXPECT_NEAR(rmsnorm_tolerance(DType::f32, 4096, 1.0), 4 * 0x1p-24 + 0x1p-24 * (16 + 4 * 64), 1e-15);
  EXPECT_GT(rmsnorm_tolerance(DType::f32, 65536, 1.0), rmsnorm_tolerance(DType::f32, 4096, 1.0));
  EXPECT_GT(rmsnorm_tolerance(DType::bf16, 4096, 1.0), rmsnorm_tolerance(DType::f16, 4096, 1.0));
  EXPECT_GT(rmsnorm_tolerance(DType::f16, 4096, 1.0), rmsnorm_tolerance(DType::f32, 4096, 1.0));
  // Relative to the reference; at zero, one ulp of the smallest subnormal either side.
  EXPECT_DOUBLE_EQ(rmsnorm_tolerance(DType::bf16, 4096, -3.0), 3.0 * (rmsnorm_tolerance(DType::bf16, 4096, 1.0) - 2 * 0x1p-133) + 2 * 0x1p-133);
  EXPECT_EQ(rmsnorm_tolerance(DType::f16, 7, 0.0), 2 * 0x1p-24);
}

// hold_mhz's arithmetic: cycles over nanoseconds between two reads of the holds' counters, in MHz; zero
// when no hold ran between them (no nanoseconds passed), never a division by zero.
TEST(HoldTotals, ClockIsCyclesOverNanosecondsSinceTheEarlierRead) {
  const GpuTimer::HoldTotals before{1'000'000, 600'000}, after{1'000'000 + 198'000, 600'000 + 100'000};
  EXPECT_DOUBLE_EQ(after.mhz_since(before), 1980.0);
  EXPECT_EQ(before.mhz_since(before), 0.0);
  EXPECT_EQ(before.mhz_since(after), 0.0);  // reads taken out of order give no clock
}

// The text every run records as timing_protocol, pinned: regress.py compares it as is across runs. v378 is
// the default since session 47: v122 (sessions 44-46: v58 with the cold batch and hot K sized from the
// median warm-up launch; v58, sessions 40-43: v26 with the repetitions in random order) with hot launches
// net of the graph's own launch. Each setting has its version, with the median sizing (v74-v137) and
// without it (v10-v73), +128 marginal, +256 net; the runs committed before keep their texts.
TEST(TimingProtocol, DefaultTextIsPinnedAndEachSettingHasItsVersion) {
  const std::string v58 =
      "v58: warm-up = >= 3 launches and 1 ms, then the timed loop until 100 ms of wall time; cold = queued "
      "batches of <= 4 launches, the previous launch waited for and the L2's persisting lines reset, then "
      "flush + hold + events each, the hold's cycles counted (hold_mhz); hot = CUDA graph of K launches; "
      "the repetitions of all cases in random order, each warmed up and settled";
  const std::string v122 = "v122" + v58.substr(3) + "; the batch and K sized from the median warm-up launch";
  EXPECT_EQ(timing_protocol(false, false, 0, 0, true, true, true, HotTiming::graph), v122);  // sessions 44-46
  EXPECT_EQ(timing_protocol(false, false),
            "v378" + v58.substr(3, v58.find("; the repetitions") - 3) +
                " net of the graph's own launch (the median of 2 t(K) - t(2K) over the settling's replays, where over"
                " 3 standard errors), over K"
                "; the repetitions of all cases in random order, each warmed up and settled"
                "; the batch and K sized from the median warm-up launch");
  EXPECT_EQ(timing_protocol(false, false, 0, 0, true, true, false, HotTiming::graph), v58);  // sessions 40-43
  // The runs of sessions 24-39 (registered order) and those before session 24 keep their texts.
  EXPECT_EQ(timing_protocol(false, false, 0, 0, true, false, false, HotTiming::graph),
            "v26: warm-up = >= 3 launches and 1 ms, then the timed loop until 100 ms of wall time; cold = queued "
            "batches of <= 4 launches, the previous launch waited for and the L2's persisting lines reset, then "
            "flush + hold + events each, the hold's cycles counted (hold_mhz); hot = CUDA graph of K launches");
  EXPECT_EQ(timing_protocol(false, false, 0, 0, false, false, false, HotTiming::graph),
            "v10: warm-up = >= 3 launches and 1 ms, then the timed loop until 100 ms of wall time; cold = queued "
            "batches of <= 4 launches, flush + hold + events each, the hold's cycles counted (hold_mhz); hot = "
            "CUDA graph of K launches");
  std::set<std::string> seen;  // every combination of settings has a version of its own
  for (int setting = 0; setting < 6; ++setting) {
    const bool median = setting & 1;
    const HotTiming hot = setting < 2 ? HotTiming::graph : setting < 4 ? HotTiming::marginal : HotTiming::net;
    const bool marginal = hot == HotTiming::marginal, net = hot == HotTiming::net;
    for (const auto& [reset, interleaved] : {std::pair{false, false}, {true, false}, {false, true}, {true, true}}) {
      const int base =
          (reset ? 26 : 10) + (interleaved ? 32 : 0) + (median ? 64 : 0) + (marginal ? 128 : 0) + (net ? 256 : 0);
      auto version = [&](bool before, bool continuous, double rest, double min_hold) {
        const std::string t = timing_protocol(before, continuous, rest, min_hold, reset, interleaved, median, hot);
        return t.substr(0, t.find(':'));
      };
      EXPECT_EQ(version(false, false, 0, 0), "v" + std::to_string(base));
      EXPECT_EQ(version(true, false, 0, 0), "v" + std::to_string(base + 1));
      EXPECT_EQ(version(false, true, 0, 0), "v" + std::to_string(base + 2));
      EXPECT_EQ(version(true, true, 0, 0), "v" + std::to_string(base + 3));
      EXPECT_EQ(version(false, false, 100, 0), "v" + std::to_string(base + 4));  // SOLBENCH_REST_MS
      EXPECT_EQ(version(true, true, 100, 0), "v" + std::to_string(base + 7));
      EXPECT_EQ(version(false, false, 0, 40), "v" + std::to_string(base + 8));  // SOLBENCH_MIN_HOLD_US
      EXPECT_EQ(version(true, true, 100, 40), "v" + std::to_string(base + 15));
      for (int bits = 0; bits < 16; ++bits)
        EXPECT_TRUE(seen.insert(version(bits & 1, bits & 2, bits & 4 ? 100 : 0, bits & 8 ? 40 : 0)).second);
      const std::string t = timing_protocol(false, false, 0, 0, reset, interleaved, median, hot);
      EXPECT_EQ(t.find("reset") != std::string::npos, reset);
      EXPECT_EQ(t.find("random order") != std::string::npos, interleaved);
      EXPECT_EQ(t.find("median warm-up launch") != std::string::npos, median);
      EXPECT_EQ(t.find("graphs of 2K and K launches") != std::string::npos, marginal);
      EXPECT_EQ(t.find("net of the graph's own launch") != std::string::npos, net);
      EXPECT_NE(t.find(marginal ? "; hot = CUDA graphs of 2K" : "; hot = CUDA graph of K launches"), std::string::npos);
    }
  }
  EXPECT_EQ(seen.size(), 384u);
  EXPECT_EQ(timing_protocol(false, false, 0, 0, true, true, true, HotTiming::marginal).substr(0, 5), "v250:");
  EXPECT_EQ(timing_protocol(false, false, 0, 0, true, true, true, HotTiming::net).substr(0, 5), "v378:");
  EXPECT_NE(timing_protocol(true, false).find("hold + flush + events"), std::string::npos);
  EXPECT_NE(timing_protocol(false, true).find("continuous queue of batches"), std::string::npos);
  EXPECT_EQ(timing_protocol(false, false, 0), timing_protocol(false, false));
  EXPECT_NE(timing_protocol(false, false, 100).find("launches of >= 1 ms: 100 ms of GPU idle"), std::string::npos);
  EXPECT_EQ(timing_protocol(false, false).find("idle"), std::string::npos);
  EXPECT_EQ(timing_protocol(false, false, 0, 0), timing_protocol(false, false));
  EXPECT_NE(timing_protocol(false, false, 0, 40).find("the hold at least 40 us; hot"), std::string::npos);
  EXPECT_EQ(timing_protocol(false, false).find("at least"), std::string::npos);
  // SOLBENCH_HOT_WINDOW_US: +512 and its window in the text; the default window leaves v378's text as it was.
  EXPECT_EQ(timing_protocol(false, false, 0, 0, true, true, true, HotTiming::net, kHotWindowUs), timing_protocol(false, false));
  const std::string wide = timing_protocol(false, false, 0, 0, true, true, true, HotTiming::net, 500);
  EXPECT_EQ(wide.substr(0, 5), "v890:");
  EXPECT_EQ(wide.substr(4), timing_protocol(false, false).substr(4) + "; K sized for a 500 us window (at most 100)");
  EXPECT_EQ(timing_protocol(false, false, 0, 0, true, true, true, HotTiming::graph, 200).substr(0, 5), "v634:");
  EXPECT_EQ(timing_protocol(false, false).find("window"), std::string::npos);
}

// The launch time a case is sized from: the median of the warm-up's launches (the upper median of an even
// count), so that one slow host launch does not set K; "last" (SOLBENCH_WARMUP_SIZING=last) keeps v58's.
// SOLBENCH_HOT_TIMING=marginal: what one more launch costs inside a graph, without the graph's own launch.
// Session 44's fit on the H200: t(K) = 0.50 + 3.5 / K us for the PDL floor, so K = 8 reads 0.94 us a launch
// where one more launch costs 0.50.
TEST(MarginalLaunch, TheGraphsOwnLaunchCancels) {
  auto graph_us = [](int k) { return 3.5 + 0.50 * k; };  // one replay of a graph of k launches
  EXPECT_NEAR(graph_us(8) / 8, 0.9375, 1e-12);
  EXPECT_NEAR(marginal_launch_ms(graph_us(8), graph_us(16), 8), 0.50, 1e-12);
  EXPECT_NEAR(marginal_launch_ms(graph_us(2), graph_us(4), 2), 0.50, 1e-12);
  EXPECT_DOUBLE_EQ(marginal_launch_ms(1.0, 1.0, 4), 0.0);
  EXPECT_THROW(marginal_launch_ms(1.0, 2.0, 0), std::invalid_argument);
}

// SOLBENCH_HOT_TIMING=net: the graph's own launch from one pair of replays, then each replay of K net of it.
TEST(NetLaunch, TheGraphsOwnLaunchMeasuredOnceThenTakenOff) {
  auto graph_us = [](int k) { return 3.5 + 0.50 * k; };
  EXPECT_NEAR(graph_launch_ms(graph_us(8), graph_us(16)), 3.5, 1e-12);
  EXPECT_NEAR(graph_launch_ms(graph_us(3), graph_us(6)), 3.5, 1e-12);
  EXPECT_NEAR(net_launch_ms(graph_us(8), 3.5, 8), 0.50, 1e-12);
  EXPECT_NEAR(net_launch_ms(graph_us(8), 3.1, 8), 0.55, 1e-12);  // G 0.4 us off at K 8: 0.05 us a launch
  EXPECT_THROW(net_launch_ms(1.0, 0.5, 0), std::invalid_argument);
}

// net takes the graph's own launch off only where the settling resolved it: hundreds of samples close
// together (a microsecond kernel), not 3 or 4 scattered by a millisecond replay's jitter.
TEST(NetLaunch, TheGraphsOwnLaunchTakenOffOnlyWhereResolved) {
  std::vector<double> us_kernel;  // G 3.5 us, samples within +-0.4 us
  for (int i = 0; i < 300; ++i) us_kernel.push_back(1e-3 * (3.5 + 0.4 * ((i % 9) - 4) / 4.0));
  const GraphLaunch fast = estimate_graph_launch(us_kernel);
  EXPECT_NEAR(fast.median_ms, 3.5e-3, 1e-12);
  EXPECT_TRUE(fast.resolved);
  EXPECT_DOUBLE_EQ(fast.taken_off_ms(), fast.median_ms);
  EXPECT_LT(fast.standard_error_ms, 0.05e-3);
  // A 5 ms kernel at K 2: 2 t(2) - t(4) off by tens of microseconds either way.
  const GraphLaunch slow = estimate_graph_launch({0.041, -0.030, 0.012, -0.018});
  EXPECT_DOUBLE_EQ(slow.median_ms, 0.012);
  EXPECT_FALSE(slow.resolved);
  EXPECT_EQ(slow.taken_off_ms(), 0.0);
  EXPECT_NEAR(net_launch_ms(10.0, slow.taken_off_ms(), 2), 5.0, 1e-12);  // graph / K
  // Three equal samples: no spread, resolved if positive; never a negative launch taken off.
  EXPECT_TRUE(estimate_graph_launch({0.003, 0.003, 0.003}).resolved);
  EXPECT_FALSE(estimate_graph_launch({-0.001, -0.001, -0.001}).resolved);
  // The median's standard error: 1.2533 x 1.4826 x MAD / sqrt(n).
  const GraphLaunch g = estimate_graph_launch({1.0, 2.0, 3.0, 4.0});  // upper median 3, MAD 1
  EXPECT_NEAR(g.standard_error_ms, 1.2533 * 1.4826 / 2.0, 1e-12);
  EXPECT_TRUE(g.resolved);  // 3 > 3 x 0.929
  EXPECT_FALSE(estimate_graph_launch({1.0, 2.0, 3.0, 6.0}).resolved);  // MAD 2: 3 < 3 x 1.858
  EXPECT_THROW(estimate_graph_launch({}), std::invalid_argument);
}

TEST(UpperMedian, TheMiddleElementOnceSorted) {
  EXPECT_DOUBLE_EQ(upper_median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(upper_median({4.0, 1.0, 3.0, 2.0}), 3.0);  // even count: the upper of the two
  EXPECT_DOUBLE_EQ(upper_median({5.0}), 5.0);
  EXPECT_THROW(upper_median({}), std::invalid_argument);
}

TEST(SizingLaunch, MedianOfTheWarmUpNotItsLastLaunch) {
  // Session 43 on GPU-cc6011d6: 1 x 4096's warm-up ended on a ~25 us host hiccup; its launches took ~6 us.
  const std::vector<double> warm_up = {0.0061, 0.0058, 0.0063, 0.0060, 0.0250};
  EXPECT_DOUBLE_EQ(sizing_launch_ms(warm_up, true), 0.0061);
  EXPECT_DOUBLE_EQ(sizing_launch_ms(warm_up, false), 0.0250);
  EXPECT_EQ(hot_launch_count(sizing_launch_ms(warm_up, true)), 9);
  EXPECT_EQ(hot_launch_count(sizing_launch_ms(warm_up, false)), 2);  // what v58 captured: K = 2
  EXPECT_DOUBLE_EQ(sizing_launch_ms({0.004, 0.002}, true), 0.004);   // even count: the upper median
  EXPECT_DOUBLE_EQ(sizing_launch_ms({0.003}, true), 0.003);
  EXPECT_DOUBLE_EQ(sizing_launch_ms({0.003}, false), 0.003);
  EXPECT_THROW(sizing_launch_ms({}, true), std::invalid_argument);
  EXPECT_THROW(sizing_launch_ms({}, false), std::invalid_argument);
}

// The SOLBENCH_* settings of the cold protocol: defaults without them, each value they take, and a clear
// error for a bad one (the bench binary prints it and exits 2 before measuring anything).
TimerSettings settings_of(const std::map<std::string, std::string>& vars) {
  return TimerSettings::from_env([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(TimerSettings, DefaultsWithoutTheVariables) {
  const TimerSettings s = settings_of({});
  EXPECT_EQ(s.flush_bytes, 0u);
  EXPECT_EQ(s.flush_method, FlushMethod::memset);
  EXPECT_FALSE(s.hold_before_flush);
  EXPECT_FALSE(s.continuous_queue);
  EXPECT_EQ(s.rest_ms, 0.0);
  EXPECT_EQ(s.min_hold_us, 0.0);
  EXPECT_TRUE(s.reset_persisting);
  EXPECT_TRUE(s.size_from_median);
  EXPECT_EQ(s.hot_timing, HotTiming::net);  // since session 47 (v378); graph until then
  EXPECT_EQ(s.hot_window_us, kHotWindowUs);
}

TEST(TimerSettings, EachValueParses) {
  const TimerSettings s = settings_of({{"SOLBENCH_FLUSH_BYTES", "268435456"},
                                       {"SOLBENCH_FLUSH_METHOD", "read"},
                                       {"SOLBENCH_COLD_HOLD", "before-flush"},
                                       {"SOLBENCH_COLD_QUEUE", "continuous"},
                                       {"SOLBENCH_REST_MS", "100"},
                                       {"SOLBENCH_MIN_HOLD_US", "40"},
                                       {"SOLBENCH_PERSISTING_RESET", "off"},
                                       {"SOLBENCH_WARMUP_SIZING", "last"},
                                       {"SOLBENCH_HOT_TIMING", "marginal"},
                                       {"SOLBENCH_HOT_WINDOW_US", "500"}});
  EXPECT_EQ(s.flush_bytes, std::size_t{268435456});
  EXPECT_EQ(s.flush_method, FlushMethod::read);
  EXPECT_TRUE(s.hold_before_flush);
  EXPECT_TRUE(s.continuous_queue);
  EXPECT_EQ(s.rest_ms, 100.0);
  EXPECT_EQ(s.min_hold_us, 40.0);
  EXPECT_FALSE(s.reset_persisting);
  EXPECT_FALSE(s.size_from_median);
  EXPECT_EQ(s.hot_timing, HotTiming::marginal);
  EXPECT_EQ(s.hot_window_us, 500.0);
  EXPECT_EQ(settings_of({{"SOLBENCH_HOT_WINDOW_US", "10"}}).hot_window_us, 10.0);
  EXPECT_EQ(settings_of({{"SOLBENCH_HOT_WINDOW_US", "5000"}}).hot_window_us, 5000.0);
  for (const char* h : {"graph", "marginal", "net"})
    EXPECT_STREQ(hot_timing_name(settings_of({{"SOLBENCH_HOT_TIMING", h}}).hot_timing), h);
  EXPECT_TRUE(settings_of({{"SOLBENCH_PERSISTING_RESET", "on"}}).reset_persisting);
  EXPECT_TRUE(settings_of({{"SOLBENCH_WARMUP_SIZING", "median"}}).size_from_median);
  for (const char* m : {"memset", "kernel", "read"})
    EXPECT_STREQ(flush_method_name(settings_of({{"SOLBENCH_FLUSH_METHOD", m}}).flush_method), m);
  EXPECT_EQ(settings_of({{"SOLBENCH_REST_MS", "0"}}).rest_ms, 0.0);
}

TEST(TimerSettings, BadValuesNameTheVariable) {
  const std::pair<const char*, const char*> bad[] = {
      {"SOLBENCH_FLUSH_BYTES", ""},       {"SOLBENCH_FLUSH_BYTES", "0"},      {"SOLBENCH_FLUSH_BYTES", "-5"},
      {"SOLBENCH_FLUSH_BYTES", "60MB"},   {"SOLBENCH_FLUSH_METHOD", "zero"},  {"SOLBENCH_FLUSH_METHOD", ""},
      {"SOLBENCH_FLUSH_METHOD", "evict-last"},  // removed in session 17: an error now, not a silent default
      {"SOLBENCH_COLD_HOLD", "before"},   {"SOLBENCH_COLD_QUEUE", "eager"},   {"SOLBENCH_REST_MS", "-1"},
      {"SOLBENCH_REST_MS", "100ms"},      {"SOLBENCH_REST_MS", "10001"},      {"SOLBENCH_REST_MS", ""},
      {"SOLBENCH_REST_MS", " 5"},         {"SOLBENCH_REST_MS", "+5"},         {"SOLBENCH_FLUSH_BYTES", "+4096"},
      {"SOLBENCH_FLUSH_BYTES", " 4096"},  {"SOLBENCH_FLUSH_BYTES", "99999999999999999999999"},
      {"SOLBENCH_FLUSH_BYTES", "1099511627777"},  // 1 TiB + 1
      {"SOLBENCH_MIN_HOLD_US", "1001"},   {"SOLBENCH_MIN_HOLD_US", "-1"},   {"SOLBENCH_MIN_HOLD_US", "40us"},
      {"SOLBENCH_PERSISTING_RESET", "yes"}, {"SOLBENCH_PERSISTING_RESET", ""},
      {"SOLBENCH_WARMUP_SIZING", "mean"}, {"SOLBENCH_WARMUP_SIZING", ""},   {"SOLBENCH_WARMUP_SIZING", "Median"},
      {"SOLBENCH_HOT_TIMING", "diff"},   {"SOLBENCH_HOT_TIMING", ""},
      {"SOLBENCH_HOT_WINDOW_US", "9"},   {"SOLBENCH_HOT_WINDOW_US", "5001"}, {"SOLBENCH_HOT_WINDOW_US", "500us"},
      {"SOLBENCH_HOT_WINDOW_US", ""},    {"SOLBENCH_HOT_WINDOW_US", "0"},    {"SOLBENCH_HOT_WINDOW_US", "-50"}};
  for (const auto& [name, value] : bad) {
    try {
      settings_of({{name, value}});
      ADD_FAILURE() << name << "='" << value << "' was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(name, 0), 0u) << what;
      EXPECT_NE(what.find(std::string("got '") + value + "'"), std::string::npos) << what;
    }
  }
}

TEST(TimerSettings, ContinuousQueueNeedsThePersistingResetOff) {
  // The reset waits for the launch before it, which a continuous queue never does.
  try {
    settings_of({{"SOLBENCH_COLD_QUEUE", "continuous"}});
    ADD_FAILURE() << "a continuous queue was accepted with the persisting reset on";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("SOLBENCH_COLD_QUEUE", 0), 0u) << what;
    EXPECT_NE(what.find("SOLBENCH_PERSISTING_RESET"), std::string::npos) << what;
  }
  EXPECT_TRUE(
      settings_of({{"SOLBENCH_COLD_QUEUE", "continuous"}, {"SOLBENCH_PERSISTING_RESET", "off"}}).continuous_queue);
}

// register_case over Google Benchmark's own runner (no GPU: the bodies time nothing; 1 s a manual iteration,
// so that one call of the body makes each repetition, the first one's calibration included): a case that throws, or is refused, in some repetitions and not in others. Google Benchmark
// checks that all repetitions of a case report one iteration count and aborts the process otherwise (1.8.3
// on the H200 in session 43, c214: a PyTorch baseline timed in one repetition, out of memory in two), so
// before this these cases killed the binary with every result unwritten.
// A run's error or skip message, "" when it ran: Google Benchmark 1.7.1 (Debian, CI) names it error_message,
// 1.8 (the H200 machine) skip_message.
template <class R>
auto run_message(const R& r, int) -> decltype(r.error_occurred, std::string()) {
  return r.error_occurred ? r.error_message : "";
}
template <class R>
auto run_message(const R& r, long) -> decltype(r.skip_message, std::string()) {
  return static_cast<bool>(r.skipped) ? r.skip_message : "";
}

struct CapturedRuns : benchmark::BenchmarkReporter {
  std::vector<Run> runs;
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& r) override { runs.insert(runs.end(), r.begin(), r.end()); }
  std::vector<const Run*> of(const std::string& name, Run::RunType type) const {
    std::vector<const Run*> out;
    for (const Run& r : runs)
      if (r.run_name.str().rfind(name, 0) == 0 && r.run_type == type) out.push_back(&r);
    return out;
  }
};

TEST(RegisterCase, ACaseRunsInEveryRepetitionOrInNoneAndNeverAbortsTheRun) {
  static int calls[6] = {0, 0, 0, 0, 0, 0};
  auto body = [](int which, int throw_on_call, bool refuse) {
    return [=](benchmark::State& st) {
      if (++calls[which] == throw_on_call) {
        if (refuse) throw Unsupported("out of memory this time");
        throw std::runtime_error("a CUDA error this time");
      }
      for (auto _ : st) st.SetIterationTime(1.0);
    };
  };
  register_case("selftest/fails_in_second", body(0, 2, false));
  register_case("selftest/fails_in_first", body(1, 1, false));
  register_case("selftest/refused_after_timed", body(2, 2, true));
  register_case("selftest/refused_first", body(3, 1, true));
  register_case("selftest/verification_fails_first", [](benchmark::State& st) {
    if (++calls[4] == 1) return fail_case(st, "selftest/verification_fails_first", "verification failed: 2 of 8");
    for (auto _ : st) st.SetIterationTime(1.0);
  });
  register_case("selftest/timed", body(5, 0, false));  // never throws (its count starts at 1)
  std::vector<std::string> args = {"test_harness_cpu", "--benchmark_filter=^selftest/", "--benchmark_repetitions=3",
                                   "--benchmark_enable_random_interleaving=true"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  CapturedRuns out;
  // Before register_case kept each case's history: "Check (run_iterations) == (run.iterations) failed"
  // (abort) for fails_in_second and refused_after_timed, a segmentation fault for fails_in_first.
  benchmark::RunSpecifiedBenchmarks(&out);

  using Run = benchmark::BenchmarkReporter::Run;
  auto errors = [&](const std::string& name) {
    std::vector<std::string> e;
    for (const Run* r : out.of(name, Run::RT_Iteration)) e.push_back(run_message(*r, 0));
    return e;
  };
  const std::string cuda = "a CUDA error this time", not_run = "not run: it failed in an earlier repetition: ";
  EXPECT_EQ(errors("selftest/fails_in_second"), (std::vector<std::string>{"", cuda, not_run + cuda}));
  EXPECT_EQ(errors("selftest/fails_in_first"), (std::vector<std::string>{cuda, not_run + cuda, not_run + cuda}));
  EXPECT_EQ(calls[1], 1);
  const std::string wrong = "verification failed: 2 of 8";
  EXPECT_EQ(errors("selftest/verification_fails_first"), (std::vector<std::string>{wrong, not_run + wrong, not_run + wrong}));
  EXPECT_EQ(calls[4], 1);
  // Refused after a timed repetition: a failure, not a skip (the scripts count a "skipped:" message as a skip).
  const auto refused_late = errors("selftest/refused_after_timed");
  ASSERT_EQ(refused_late.size(), 3u);
  EXPECT_EQ(refused_late[0], "");
  EXPECT_EQ(refused_late[1].rfind("refused after an earlier run of it was timed", 0), 0u) << refused_late[1];
  EXPECT_NE(refused_late[1].find("out of memory this time"), std::string::npos);
  EXPECT_EQ(refused_late[2], not_run + refused_late[1]);
  // Refused in its first repetition: skipped in all three with the reason, its body not called again.
  EXPECT_EQ(errors("selftest/refused_first"), std::vector<std::string>(3, "skipped: out of memory this time"));
  EXPECT_EQ(calls[3], 1);
  // A case that runs keeps its statistics; every repetition of every case reported one iteration count.
  EXPECT_EQ(errors("selftest/timed"), std::vector<std::string>(3, ""));
  EXPECT_EQ(calls[5], 3);
  EXPECT_FALSE(out.of("selftest/timed", Run::RT_Aggregate).empty());
  for (const char* name : {"selftest/fails_in_second", "selftest/fails_in_first", "selftest/refused_after_timed",
                           "selftest/refused_first", "selftest/verification_fails_first", "selftest/timed"}) {
    const auto runs = out.of(name, Run::RT_Iteration);
    ASSERT_EQ(runs.size(), 3u) << name;
    for (const Run* r : runs) EXPECT_EQ(r->iterations, runs[0]->iterations) << name;
  }
}

}  // namespace
}  // namespace sb::bench
