// CPU tests of the harness's pure functions: the resident set, device strings, the cold batch and hot
// launch counts, the graph-launch estimate, the timing protocol's text, the NVTX name mapping, the RMSNorm
// verification tolerance, the checks of Google Benchmark's flags, and register_case and the partial results file
// over Google Benchmark's runner. No GPU needed.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/device.h"
#include "harness/gbench.h"
#include "harness/nvtx.h"
#include "harness/partial.h"
#include "harness/resident.h"
#include "harness/timer.h"
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
  // An H200's UUID, as nvidia-smi --query-gpu=uuid printed it.
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
  EXPECT_EQ(hot_launch_count(0.005), 10);   // a microsecond kernel sized from its ~5 us warm launch
}

TEST(EagerLaunchCount, FillsAHalfMillisecondWindowWithinBounds) {
  EXPECT_EQ(eager_launch_count(0.005), 100);  // a microsecond kernel's ~5 us warm launch: 100
  EXPECT_EQ(eager_launch_count(0.01), 50);    // 10 us: 50
  EXPECT_EQ(eager_launch_count(0.0), 100);    // never more than 100
  EXPECT_EQ(eager_launch_count(5.0), 2);      // long kernels: still 2
  EXPECT_GE(eager_launch_count(0.005), hot_launch_count(0.005));  // never fewer than the hot graph holds
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

// The text every run records as timing_protocol, pinned: regress.py compares it as is across runs.
TEST(TimingProtocol, TheTextIsPinned) {
  EXPECT_STREQ(kTimingProtocol,
               "1: Each case warms up with at least 3 launches and 1 ms of GPU time, then runs its timed loop untimed "
               "until 100 ms of wall time have passed. The cold batch and the hot K are sized from the median warm-up "
               "launch. Cold launches are queued in batches of at most 4 behind one uncounted launch, each preceded by "
               "the previous launch's end, a reset of the L2's persisting lines, an L2-sized memset flush and a hold of "
               "twice the launch's host time (at most 1 ms). Hot launches are a CUDA graph of K launches, K sized for a "
               "50 us window, each replay timed net of the graph's own launch (the median of 2 t(K) - t(2K) over the "
               "settling's replays, where over 3 standard errors) over K. The repetitions of all cases run in random "
               "order, each warmed up and settled.");
  EXPECT_STREQ(kRegisteredOrderNote,
               " This run: the repetitions in registered order (--benchmark_enable_random_interleaving=false).");
}

// The graph's own launch from one pair of replays, then each replay of K net of it.
TEST(NetLaunch, TheGraphsOwnLaunchMeasuredOnceThenTakenOff) {
  auto graph_us = [](int k) { return 3.5 + 0.50 * k; };
  EXPECT_NEAR(graph_launch_ms(graph_us(8), graph_us(16)), 3.5, 1e-12);
  EXPECT_NEAR(graph_launch_ms(graph_us(3), graph_us(6)), 3.5, 1e-12);
  EXPECT_NEAR(net_launch_ms(graph_us(8), 3.5, 8), 0.50, 1e-12);
  EXPECT_NEAR(net_launch_ms(graph_us(8), 3.1, 8), 0.55, 1e-12);  // G 0.4 us off at K 8: 0.05 us a launch
  EXPECT_THROW(net_launch_ms(1.0, 0.5, 0), std::invalid_argument);
}

// The graph's own launch is taken off only where the settling resolved it: hundreds of samples close
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
  // A warm-up that ends on a ~25 us host hiccup; the launches took ~6 us.
  const std::vector<double> warm_up = {0.0061, 0.0058, 0.0063, 0.0060, 0.0250};
  EXPECT_DOUBLE_EQ(sizing_launch_ms(warm_up), 0.0061);
  EXPECT_EQ(hot_launch_count(sizing_launch_ms(warm_up)), 9);  // the last launch alone would give K = 2
  EXPECT_DOUBLE_EQ(sizing_launch_ms({0.004, 0.002}), 0.004);  // even count: the upper median
  EXPECT_DOUBLE_EQ(sizing_launch_ms({0.003}), 0.003);
  EXPECT_THROW(sizing_launch_ms({}), std::invalid_argument);
}

// register_case over Google Benchmark's own runner (no GPU: the bodies time nothing; 1 s a manual iteration,
// so that one call of the body makes each repetition, the first one's calibration included): a case that
// throws, or is refused, in some repetitions and not in others. Google Benchmark checks that all
// repetitions of a case report one iteration count and aborts the process otherwise (e.g. a PyTorch
// baseline timed in one repetition, out of memory in another); register_case keeps that from happening.
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

// Runs the registered cases whose names start with `prefix` under Google Benchmark with `flags`, capturing the runs.
CapturedRuns run_cases(const std::string& prefix, std::vector<std::string> flags) {
  flags.insert(flags.begin(), {"test_harness_cpu", "--benchmark_filter=^" + prefix});
  std::vector<char*> argv;
  for (auto& a : flags) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  CapturedRuns out;
  benchmark::RunSpecifiedBenchmarks(&out);
  return out;
}

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
  // Without register_case's history: "Check (run_iterations) == (run.iterations) failed" (abort) for
  // fails_in_second and refused_after_timed, a segmentation fault for fails_in_first.
  const CapturedRuns out =
      run_cases("selftest/", {"--benchmark_repetitions=3", "--benchmark_enable_random_interleaving=true"});

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

// The partial results file holds one line a repetition, each what Google Benchmark reports for it: the calls of a
// case's first repetition that find its iteration count (about 0.1 ms a manual iteration against a 10 ms minimum
// time: 1, 10, then over 100 iterations) are not written, and the times, counters and messages match the reported
// runs'.
TEST(PartialResults, OneLineARepetitionAsGoogleBenchmarkReportsIt) {
  static int calls[2] = {0, 0};
  register_case("partialtest/timed", [](benchmark::State& st) {
    for (auto _ : st) set_iteration_time(st, 1e-4 * (1 + 0.01 * calls[0]));
    ++calls[0];
    st.counters["GB/s"] = benchmark::Counter(2e-3, benchmark::Counter::kIsIterationInvariantRate);
    st.counters["err"] = 0.25;
  });
  register_case("partialtest/refused", [](benchmark::State&) { throw Unsupported("needs \"sm_90a\""); });
  register_case("partialtest/fails_in_second", [](benchmark::State& st) {
    if (++calls[1] == 4) throw std::runtime_error("a CUDA error\nthis time");  // 3 calls find the count
    for (auto _ : st) set_iteration_time(st, 1e-4);
  });
  const std::vector<std::string> flags = {"--benchmark_repetitions=3", "--benchmark_min_time=0.01s",
                                          "--benchmark_enable_random_interleaving=true"};
  std::vector<std::string> args = {"test_harness_cpu"};
  args.insert(args.end(), flags.begin(), flags.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  const Options opt = extract_options(&argc, argv.data());
  EXPECT_EQ(opt.repetitions, 3);
  EXPECT_DOUBLE_EQ(opt.min_time_s, 0.01);
  const std::string path = ::testing::TempDir() + "partialtest.json.partial.jsonl";
  start_partial_results(path, opt, "test_harness_cpu");
  std::vector<std::string> gb_flags = flags;
  gb_flags[1] = "--benchmark_min_time=0.01";  // Google Benchmark 1.7.1's form (bench_main rewrites it so)
  const CapturedRuns out = run_cases("partialtest/", gb_flags);

  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u + 9u);
  EXPECT_EQ(lines[0].rfind("{\"context\": {\"date\": ", 0), 0u) << lines[0];
  std::map<std::string, std::string> written;  // "<run_name>#<repetition_index>" -> line
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto name_at = lines[i].find("\"run_name\": \"") + 13, index_at = lines[i].find("\"repetition_index\": ") + 20;
    const std::string key = lines[i].substr(name_at, lines[i].find('"', name_at) - name_at) + "#" +
                            lines[i].substr(index_at, lines[i].find(',', index_at) - index_at);
    written[key] = lines[i];
  }
  using Run = benchmark::BenchmarkReporter::Run;
  for (const char* name : {"partialtest/timed", "partialtest/refused", "partialtest/fails_in_second"})
    for (const Run* r : out.of(name, Run::RT_Iteration)) {
      RepetitionResult expect{r->run_name.str(), 3, static_cast<int>(r->repetition_index),
                              static_cast<long long>(r->iterations), r->real_accumulated_time, run_message(*r, 0), {}};
      if (expect.error.empty())
        for (const auto& [key, counter] : r->counters) expect.counters.emplace_back(key, counter.value);
      EXPECT_EQ(written[expect.run_name + "#" + std::to_string(expect.repetition_index)], repetition_line(expect));
    }
  EXPECT_GT(calls[0], 3);  // the calls that found the iteration count, not written
  end_partial_results();
  EXPECT_FALSE(std::ifstream(path).good());
}

TEST(PartialResults, LinesAreJsonInGoogleBenchmarksFieldNames) {
  EXPECT_EQ(json_string("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(context_line({{"gpu_name", "NVIDIA H200"}, {"sm_count", "132"}}),
            "{\"context\": {\"gpu_name\": \"NVIDIA H200\", \"sm_count\": \"132\"}}");
  EXPECT_EQ(repetition_line({"c/manual_time", 5, 2, 4, 2e-5, "", {{"GB/s", 1.5}}}),
            "{\"name\": \"c/manual_time\", \"run_name\": \"c/manual_time\", \"run_type\": \"iteration\", "
            "\"repetitions\": 5, \"repetition_index\": 2, \"threads\": 1, \"iterations\": 4, \"real_time\": 5, "
            "\"time_unit\": \"us\", \"GB/s\": 1.5}");
  EXPECT_EQ(repetition_line({"c/manual_time", 1, 0, 4, 0, "skipped: no", {}}),
            "{\"name\": \"c/manual_time\", \"run_name\": \"c/manual_time\", \"run_type\": \"iteration\", "
            "\"repetitions\": 1, \"repetition_index\": 0, \"threads\": 1, \"iterations\": 4, "
            "\"error_occurred\": true, \"error_message\": \"skipped: no\"}");
  EXPECT_EQ(partial_path("logs/bench_rmsnorm.json"), "logs/bench_rmsnorm.json.partial.jsonl");
  const benchmark::Counter rate(2.0, benchmark::Counter::kIsIterationInvariantRate);
  EXPECT_DOUBLE_EQ(finished_counter(rate, 10, 0.5), 40.0);
  EXPECT_DOUBLE_EQ(finished_counter(benchmark::Counter(3.0), 10, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(finished_counter(benchmark::Counter(3.0, benchmark::Counter::kAvgIterationsRate), 10, 0.5), 0.6);
}

TEST(PartialResults, ACallIsARepetitionsResultAsGoogleBenchmarkDecides) {
  EXPECT_FALSE(is_repetition_result(false, false, false, 10, 0.001, 0.01));  // calibration
  EXPECT_TRUE(is_repetition_result(false, false, false, 100, 0.01, 0.01));   // reached the minimum time
  EXPECT_TRUE(is_repetition_result(true, false, false, 100, 0.009, 0.01));   // a later repetition
  EXPECT_TRUE(is_repetition_result(false, true, false, 3, 1e-6, 0.01));      // fixed iterations (--profile)
  EXPECT_TRUE(is_repetition_result(false, false, true, 1, 0, 0.01));         // skipped with an error
  EXPECT_TRUE(is_repetition_result(false, false, false, 1000000000, 1e-3, 0.01));
}

// Google Benchmark reads a bad numeric value as an unknown flag and any boolean value as true or false: each is
// refused first, naming the flag and the value.
TEST(GbenchFlags, BadValuesNameTheFlagAndTheValue) {
  for (const char* bad : {"--benchmark_repetitions=abc", "--benchmark_repetitions=0", "--benchmark_repetitions=-3",
                          "--benchmark_repetitions=2.5", "--benchmark_min_time=fast", "--benchmark_min_time=-1",
                          "--benchmark_min_time=0.5ms", "--benchmark_min_time=0x", "--benchmark_min_time=inf",
                          "--benchmark_enable_random_interleaving=maybe", "--benchmark_display_aggregates_only=2",
                          "--benchmark_report_aggregates_only=yess", "--benchmark_list_tests=-",
                          "--benchmark_out_format=xml", "--benchmark_format=JSON"}) {
    const std::string arg = bad, flag = arg.substr(0, arg.find('=')), value = arg.substr(arg.find('=') + 1);
    try {
      check_gbench_flag(arg);
      ADD_FAILURE() << arg << " was accepted";
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(flag + " takes ", 0), 0u) << what;
      EXPECT_NE(what.find("got '" + value + "'"), std::string::npos) << what;
    }
  }
  for (const char* bare : {"--benchmark_repetitions", "--benchmark_min_time", "--benchmark_out_format", "--benchmark_out"})
    EXPECT_THROW(check_gbench_flag(bare), UsageError) << bare;
  for (const char* good : {"--benchmark_repetitions=5", "--benchmark_min_time=0.5", "--benchmark_min_time=0.5s",
                           "--benchmark_min_time=100x", "--benchmark_enable_random_interleaving",
                           "--benchmark_display_aggregates_only=true", "--benchmark_report_aggregates_only=OFF",
                           "--benchmark_out_format=json", "--benchmark_out=x.json", "--benchmark_filter=a|b",
                           "--benchmark_context=k=v"})
    EXPECT_NO_THROW(check_gbench_flag(good)) << good;
}

TEST(GbenchFlags, ReadAsGoogleBenchmarkReadsThemTheLastOneWinning) {
  std::vector<std::string> args = {"bench", "--benchmark_min_time=0.01s", "--benchmark_repetitions=5",
                                   "--benchmark_out=a.json", "--benchmark_min_time=2", "--benchmark_out=b.json"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  const Options o = extract_options(&argc, argv.data());
  EXPECT_EQ(argc, static_cast<int>(args.size()));  // all left for Google Benchmark
  EXPECT_EQ(o.repetitions, 5);
  EXPECT_DOUBLE_EQ(o.min_time_s, 2.0);
  EXPECT_EQ(o.min_time_iterations, 0);
  EXPECT_EQ(o.benchmark_out, "b.json");
}

}  // namespace
}  // namespace sb::bench
