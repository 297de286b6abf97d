#include "harness/gbench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/check.h"
#include "harness/build_info.h"
#include "harness/nvtx.h"
#include "harness/resident.h"

namespace sb::bench {

namespace {

// Defaults for Google Benchmark's own flags, placed before the user's (the last value given wins).
// Set as flags, not per benchmark, so that case names carry no "/min_time:..." suffix and stay stable.
// min_time counts kernel time (manual time): 10 ms of it per repetition. Google Benchmark's own
// warm-up is not used: run_timed warms each case up once (launches, allocator, graph capture).
// The repetitions of all cases run in random order (protocol v58 on; --benchmark_enable_random_interleaving=false
// gives the registered order): a power-limited launch's clock depends on the seconds of work before it, which
// the registered order makes the same kind of work for every repetition of a case. In session 40 (c197, c198,
// one H200) wgmma_flash's D 128 prefill cases, registered right after tiled_flash's hot ones, held 1,292-1,670
// MHz cold where cuDNN's held 1,587-1,894; in random order 1,616-1,915 against 1,653-1,978, and the ratios of
// the two moved by up to 0.18 (b4 h32 s4096 causal: 0.820 registered, 0.996 interleaved).
#if SOLBENCH_GBENCH_MIN_TIME_SUFFIX
const char* const kDefaultFlags[] = {"--benchmark_min_time=0.01s", "--benchmark_enable_random_interleaving=true"};
#else
const char* const kDefaultFlags[] = {"--benchmark_min_time=0.01", "--benchmark_enable_random_interleaving=true"};
#endif
// The warm-up a case gets before its timed launches. First at least 3 launches and kWarmUpMs of GPU time
// (at most kMaxWarmUpLaunches): module load, allocator caches, and the launch's time, which sets the cold
// batch, the hold and the hot graph's length. Then (not with --profile) the timed loop itself, cold batches
// or graph replays with their times discarded, until kSettleMs of wall time has passed since the warm-up
// began. A launch that draws enough power sets its own SM clock within tens of milliseconds of work, at a
// level that depends on the duty cycle of that work: SDPA cuDNN prefill at b1 16k causal on the H200,
// launched cold after 1 s idle, took 3,391 us over the first 30 ms of work, 3,917 from 60 to 120 ms and
// 3,838 past 200 ms, as the clock fell from ~1,940 to ~1,700 MHz
// (results/h200/history/2026-11-30_session11_experiments/clock_probe/). With protocol v2's 1 ms warm-up
// its timed launches fell anywhere on that curve, by what had run before them, and read up to 7% from
// do_bench either way; a 100 ms warm-up of back-to-back launches without the flush and hold (duty ~100%)
// left SDPA flash at b4 4k causal recovering through its three repetitions (1,877, 1,822, 1,788 us, SM
// clock 1,807 -> 1,889 MHz; do_bench 1,689). Settling in the timed loop's own duty cycle times every case
// at the clock its own protocol settles at.
constexpr double kWarmUpMs = 1.0;
constexpr int kMaxWarmUpLaunches = 1000;
constexpr double kSettleMs = 100.0;
constexpr int kProfileLaunches = 3;
// v2 (2026-11-29): cold launches queued in batches with a host-time hold; v1 synchronized after each.
// v3: the same with the hold before the flush (SOLBENCH_COLD_HOLD=before-flush), so the flush directly
// precedes the start event as in do_bench. v4 / v5 (2026-11-30, run 2dde009 only): v2 / v3 after >= 100
// ms of back-to-back warm-up launches. v6 / v7: v2 / v3 with the warm-up continued in the timed loop itself
// until 100 ms of wall time (kSettleMs). v8 / v9: v6 / v7 with the continuous cold queue
// (SOLBENCH_COLD_QUEUE=continuous, timer.h): the GPU does not idle between cold batches. v10-v13 (session
// 12, after its runs): v6-v9 with each hold ending in two atomic adds to the clock counters (hold_mhz),
// which lengthens the hold between the flush and the start event by the adds' latency (well under a
// microsecond of a hold of >= 10 us; not yet measured): a new version, so that regress.py names the change.
// v18-v25 (session 24): v10-v17 with a floor under the hold (SOLBENCH_MIN_HOLD_US). v26-v41 (session 24):
// v10-v25 with each cold launch's flush preceded by a reset of the L2's persisting lines (timer.h), after
// the launch before it has finished; v26 is the default (SOLBENCH_PERSISTING_RESET=off gives v10-v25).
constexpr double kHotMaxLaunchMs = 10.0;
constexpr double kMaxHoldMs = 1.0;  // cap of the cold-launch hold (timer.h, cold_batch_ms)  // longer launches are not measured hot (run_timed says why)

std::unique_ptr<Env> g_env;
bool g_profile = false;
std::map<std::string, std::string> g_failures;  // case -> message

// Where a run's wall time goes, printed at its end: the case bodies Google Benchmark calls (each
// repetition's, and its calibration calls), of which run_timed's warm-up and settling, and its timed loop;
// the rest of a body is the case's own set-up (inputs, references, verification).
struct WallTime {
  long calls = 0;
  double body_s = 0, warm_s = 0, loop_s = 0;
} g_wall;
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string join_args(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

std::string fmt(double v, const char* f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void add_context(const Env& e, const BenchSpec& spec, const std::vector<std::pair<std::string, std::string>>& op_context,
                 const std::string& command, bool random_interleaving) {
  const DeviceInfo& d = e.device;
  benchmark::AddCustomContext("gpu_name", d.name);
  benchmark::AddCustomContext("gpu_uuid", d.uuid);
  benchmark::AddCustomContext("compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
  benchmark::AddCustomContext("sm_count", std::to_string(d.sm_count));
  benchmark::AddCustomContext("l2_bytes", std::to_string(d.l2_bytes));
  benchmark::AddCustomContext("sm_clock_mhz", std::to_string(d.sm_clock_khz / 1000));
  benchmark::AddCustomContext("mem_clock_mhz", std::to_string(d.mem_clock_khz / 1000));
  benchmark::AddCustomContext("mem_bus_bits", std::to_string(d.mem_bus_bits));
  benchmark::AddCustomContext("driver", std::to_string(d.driver_version / 1000) + "." + std::to_string(d.driver_version % 1000 / 10));
  benchmark::AddCustomContext("nvidia_driver", d.nvidia_driver);
  benchmark::AddCustomContext("cuda_runtime", std::to_string(d.runtime_version / 1000) + "." + std::to_string(d.runtime_version % 1000 / 10));
  benchmark::AddCustomContext("torch_version", spec.torch_version.empty() ? "none" : spec.torch_version);
  benchmark::AddCustomContext("git_commit", kGitCommit);
  benchmark::AddCustomContext("kernels_fingerprint", kKernelsFingerprint);
  for (const std::string& entry : split_list(kKernelsFingerprintPerOp, "kernels fingerprints")) {
    const auto eq = entry.find('=');
    benchmark::AddCustomContext("kernels_fingerprint_" + entry.substr(0, eq), entry.substr(eq + 1));
  }
  benchmark::AddCustomContext("build_type", kBuildType);
  benchmark::AddCustomContext("cuda_architectures", kCudaArchitectures);
  benchmark::AddCustomContext("copy_gbps", fmt(e.ceilings.copy_gbps, "%.1f"));
  benchmark::AddCustomContext("gemm_tflops", fmt(e.ceilings.gemm_tflops, "%.1f"));
  benchmark::AddCustomContext("flush_bytes", std::to_string(e.timer.flush_bytes()));
  benchmark::AddCustomContext("flush_method", e.timer.flush_method());
  benchmark::AddCustomContext("cold_hold", e.timer.cold_hold());
  benchmark::AddCustomContext("cold_queue", e.timer.cold_queue());
  benchmark::AddCustomContext("rest_ms", fmt(e.timer.rest_ms(), "%.0f"));
  benchmark::AddCustomContext("min_hold_us", fmt(1e3 * e.timer.min_hold_ms(), "%.0f"));
  benchmark::AddCustomContext("persisting_reset", e.timer.persisting_reset());
  benchmark::AddCustomContext("warmup_sizing", e.timer.warmup_sizing());
  benchmark::AddCustomContext("hot_timing", hot_timing_name(e.timer.hot_timing()));
  benchmark::AddCustomContext("hot_window_us", fmt(e.timer.hot_window_us(), "%.0f"));
  {
    std::size_t persisting = 0;
    SB_CUDA_CHECK(cudaDeviceGetLimit(&persisting, cudaLimitPersistingL2CacheSize));
    benchmark::AddCustomContext("persisting_l2_bytes", std::to_string(persisting));  // the set-aside's size
  }
  // Bumped whenever the way a case is timed changes (regress.py warns across versions).
  benchmark::AddCustomContext("timing_protocol", timing_protocol(std::string(e.timer.cold_hold()) == "before-flush",
                                                                 std::string(e.timer.cold_queue()) == "continuous",
                                                                 e.timer.rest_ms(), 1e3 * e.timer.min_hold_ms(),
                                                                 std::string(e.timer.persisting_reset()) == "on",
                                                                 random_interleaving,
                                                                 std::string(e.timer.warmup_sizing()) == "median",
                                                                 e.timer.hot_timing(), e.timer.hot_window_us()));
  for (const auto& [name, value] : op_context) benchmark::AddCustomContext(name, value);
  benchmark::AddCustomContext("profile_mode", g_profile ? "true" : "false");
  benchmark::AddCustomContext("binary_command", command);
  // The script command that produced the run (scripts/gpu_run.sh sets it), else this binary's.
  const char* run_command = std::getenv("SOLBENCH_RUN_COMMAND");
  benchmark::AddCustomContext("command", run_command && *run_command ? run_command : command);
}

}  // namespace

std::string timing_protocol(bool hold_before_flush, bool continuous_queue, double rest_ms, double min_hold_us,
                            bool reset_persisting, bool random_interleaving, bool size_from_median,
                            HotTiming hot_timing, double hot_window_us) {
  // The recorded text is compared across runs as is (the CPU test pins it); the figures in it are these
  // constants'.
  static_assert(GpuTimer::kMaxColdBatch == 4 && kSettleMs == 100.0 && kWarmUpMs == 1.0 && kGraphLaunchResolvedSe == 3.0 &&
                    kHotWindowUs == 50,
                "the protocol text states 4 launches a batch, 1 ms, 100 ms, 3 standard errors and K sized for 50 us: "
                "change it, and its version");
  const bool rest = rest_ms > 0;
  const bool wide_window = hot_window_us != kHotWindowUs;
  const bool min_hold = min_hold_us > 0;
  const int version = (reset_persisting ? 26 : 10) + (hold_before_flush ? 1 : 0) + (continuous_queue ? 2 : 0) +
                      (rest ? 4 : 0) + (min_hold ? 8 : 0) + (random_interleaving ? 32 : 0) + (size_from_median ? 64 : 0) +
                      (hot_timing == HotTiming::marginal ? 128 : 0) + (hot_timing == HotTiming::net ? 256 : 0) +
                      (wide_window ? 512 : 0);
  const std::string rest_text =
      rest ? "; launches of >= " + fmt(GpuTimer::kRestMinLaunchMs, "%.0f") + " ms: " + fmt(rest_ms, "%.0f") +
                 " ms of GPU idle between the warm-up and the timed loop"
           : "";
  return "v" + std::to_string(version) +
         ": warm-up = >= 3 launches and 1 ms, then the timed loop until 100 ms of wall time; cold = " +
         (continuous_queue ? "continuous queue of batches of <= 4 launches (the next queued before the host waits for one)"
                           : "queued batches of <= 4 launches") +
         ", " + (reset_persisting ? "the previous launch waited for and the L2's persisting lines reset, then " : "") +
         (hold_before_flush ? "hold + flush" : "flush + hold") +
         " + events each, the hold's cycles counted (hold_mhz)" +
         (min_hold ? ", the hold at least " + fmt(min_hold_us, "%.0f") + " us" : "") +
         (hot_timing == HotTiming::marginal ? "; hot = CUDA graphs of 2K and K launches, the difference of their replays over K"
          : hot_timing == HotTiming::net
              ? "; hot = CUDA graph of K launches net of the graph's own launch (the median of 2 t(K) - t(2K) over the "
                "settling's replays, where over 3 standard errors), over K"
              : "; hot = CUDA graph of K launches") +
         rest_text +
         (random_interleaving ? "; the repetitions of all cases in random order, each warmed up and settled" : "") +
         (size_from_median ? "; the batch and K sized from the median warm-up launch" : "") +
         (wide_window ? "; K sized for a " + fmt(hot_window_us, "%.0f") + " us window (at most 100)" : "");
}

Env& env() {
  if (!g_env) throw std::logic_error("sb::bench::env() used before bench_main found a GPU");
  return *g_env;
}

std::size_t resident_budget(double keep_inputs_gib, double default_share) {
  std::size_t free_bytes = 0, total = 0;
  SB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  return resident_budget_bytes(keep_inputs_gib, total, default_share);
}

// What a case's first repetition decides from its warm-up, kept for all its repetitions, so that each times
// the same protocol (and a case refused in its first, e.g. a hot launch over kHotMaxLaunchMs, is not run
// again: register_case). With the repetitions interleaved (kDefaultFlags) a case's repetitions are not
// consecutive: each warms up and settles again, since its clock depends on what ran before it, but decides
// nothing again. Before this, Google Benchmark aborted an interleaved run (session 40, c198) without naming
// the case; the likeliest is a hot launch near kHotMaxLaunchMs (torch_manual_composite at b8 h32 s2048 D 64,
// 9.3 ms) skipped in one repetition only.
struct CaseDecision {
  int cold_batch = 1;
  double hold_ms = 0;
  int hot_launches = 0;
};

// The case whose launches are warm: its decision, and its hot graph (captured once per run of consecutive
// repetitions: the graph's buffers may not outlive the case's data when other cases run in between).
struct CaseState {
  std::string name;
  Mode mode = Mode::cold;
  std::unique_ptr<Replay> graph = nullptr;
  // How its hot launches are timed: SOLBENCH_HOT_TIMING's way (graph for cold cases and --profile).
  HotTiming hot = HotTiming::graph;
  // marginal or net: the same launches, twice as many (net: during the settling only).
  std::unique_ptr<Replay> graph_2k = nullptr;
  GraphLaunch graph_launch = {};  // SOLBENCH_HOT_TIMING=net: the graph's own launch, measured during the settling
  CaseDecision decision = {};
};

void run_timed(benchmark::State& state, Mode mode, const Timed& t) {
  static CaseState current;
  static std::map<std::pair<std::string, Mode>, CaseDecision> decided;  // every case so far, by name and mode
  Env& e = env();
  GpuTimer& timer = e.timer;
  const cudaStream_t s = timer.stream();
  NvtxRange range(nvtx_name(t.case_name));

  const auto warm_start = std::chrono::steady_clock::now();
  if (current.name != t.case_name || current.mode != mode) try {
    timer.drain();  // nothing of an earlier case (or of one that threw) still in flight
    current = CaseState{t.case_name, mode};
    const auto known = decided.find({t.case_name, mode});
    // Warm-up, first part (kWarmUpMs): module load, allocator caches, the launch's time.
    const auto warm_up_start = std::chrono::steady_clock::now();
    double warm_ms = 0;
    std::vector<double> enqueue_ms, launch_ms;
    for (int i = 0; i < 3 || (warm_ms < kWarmUpMs && i < kMaxWarmUpLaunches); ++i) {
      const double one_ms = timer.warm_ms(t.launch);
      warm_ms += one_ms;
      if (i == 0) continue;  // the first pays one-time setup
      launch_ms.push_back(one_ms);
      enqueue_ms.push_back(timer.last_enqueue_ms());
    }
    // The launch time the decisions are sized from (and the rest below follows): the median warm-up launch
    // (SOLBENCH_WARMUP_SIZING=last: the last one, protocols up to v73).
    const double single_ms = sizing_launch_ms(launch_ms, std::string(timer.warmup_sizing()) == "median");
    if (known != decided.end()) {
      current.decision = known->second;
    } else {
      CaseDecision& d = current.decision;
      // Twice the median host time of a launch, held on the GPU before each cold start event.
      // SOLBENCH_MIN_HOLD_US (experiments): at least that long.
      d.hold_ms = std::max(std::min(2 * upper_median(std::move(enqueue_ms)), kMaxHoldMs), timer.min_hold_ms());
      d.cold_batch = g_profile ? 1 : cold_batch_count(single_ms);
      d.hot_launches = g_profile ? kProfileLaunches : hot_launch_count(single_ms, timer.hot_window_us());
      if (mode == Mode::hot && single_ms > kHotMaxLaunchMs)
        throw Unsupported("hot mode is for launches that L2 residency and launch overhead can change; this one takes " +
                          fmt(single_ms, "%.1f") + " ms (over " + fmt(kHotMaxLaunchMs, "%.0f") +
                          " ms), the same cold or hot, and K of them in one graph only multiply its memory");
      decided.emplace(std::pair{t.case_name, mode}, d);
    }
    const CaseDecision& d = current.decision;
    const HotTiming hot = current.hot = g_profile || mode != Mode::hot ? HotTiming::graph : timer.hot_timing();
    if (mode == Mode::hot) {
      current.graph = t.capture(s, d.hot_launches, t.launch);
      current.graph->replay(s);
    }
    if (hot != HotTiming::graph) {
      current.graph_2k = t.capture(s, 2 * d.hot_launches, t.launch);
      current.graph_2k->replay(s);
    }
    SB_CUDA_CHECK(cudaStreamSynchronize(s));
    // SOLBENCH_REST_MS (experiments): a power-limited launch first lets the GPU idle, so that its clock does
    // not depend on the cases before it; the settle loop's 100 ms then start after the rest.
    auto settle_start = warm_up_start;
    if (!g_profile && timer.rest_ms() > 0 && single_ms >= GpuTimer::kRestMinLaunchMs) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(timer.rest_ms()));
      settle_start = std::chrono::steady_clock::now();
    }
    // Second part (kSettleMs): the timed loop itself, times discarded, so that the SM clock settles at the
    // level this mode's duty cycle (flush, hold and batch synchronization, or graph replays) gives it.
    // SOLBENCH_HOT_TIMING=net: the graph's own launch from the settling's pairs of replays (at least 3).
    std::vector<double> graph_launch_samples;
    while (!g_profile &&
           (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - settle_start).count() < kSettleMs ||
            (hot == HotTiming::net && graph_launch_samples.size() < 3))) {
      if (mode == Mode::cold) {
        timer.cold_batch_ms(t.launch, d.cold_batch, d.hold_ms);
      } else {
        const double k_ms = timer.replay_ms(*current.graph);
        if (hot != HotTiming::graph) {
          const double k2_ms = timer.replay_ms(*current.graph_2k);
          if (hot == HotTiming::net) graph_launch_samples.push_back(graph_launch_ms(k_ms, k2_ms));
        }
      }
    }
    if (hot == HotTiming::net) {
      current.graph_launch = estimate_graph_launch(std::move(graph_launch_samples));
      current.graph_2k.reset();  // its memory is not held through the timed loop
    }
  } catch (...) {
    // Unsupported too (a PyTorch baseline out of memory in its hot graph's capture throws it from the
    // launch): register_case decides what the case's later repetitions do.
    g_wall.warm_s += seconds_since(warm_start);
    current = CaseState{};  // nothing half-built is reused by the next repetition
    throw;
  }
  g_wall.warm_s += seconds_since(warm_start);
  const int launches = mode == Mode::hot ? current.graph->launches() : 1;

  // One iteration: cold, the median launch of a queued batch (timer.h says why batches); hot, one replay / K.
  const GpuTimer::HoldTotals holds_before = mode == Mode::cold ? timer.hold_totals() : GpuTimer::HoldTotals{};
  const auto loop_start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    double ms = 0;
    if (mode == Mode::cold) {
      ms = upper_median(timer.cold_batch_ms(t.launch, current.decision.cold_batch, current.decision.hold_ms));
    } else if (current.hot == HotTiming::marginal) {
      const double k_ms = timer.replay_ms(*current.graph);
      ms = marginal_launch_ms(k_ms, timer.replay_ms(*current.graph_2k), launches);
    } else if (current.hot == HotTiming::net) {
      ms = net_launch_ms(timer.replay_ms(*current.graph), current.graph_launch.taken_off_ms(), launches);
    } else {
      ms = timer.replay_ms(*current.graph) / launches;
    }
    state.SetIterationTime(ms * 1e-3);
  }
  timer.drain();  // the continuous cold queue's last batch, queued by the last iteration (times discarded)
  g_wall.loop_s += seconds_since(loop_start);
  const double hold_mhz = mode == Mode::cold ? timer.hold_totals().mhz_since(holds_before) : 0.0;
  const double sm_mhz = timer.probe_sm_mhz();  // after the timed launches, outside them

  using benchmark::Counter;
  const double sol_s = std::max(t.bytes / (e.ceilings.copy_gbps * 1e9), t.flops / (e.ceilings.gemm_tflops * 1e12));
  state.counters["GB/s"] = Counter(t.bytes * 1e-9, Counter::kIsIterationInvariantRate);
  state.counters["TFLOP/s"] = Counter(t.flops * 1e-12, Counter::kIsIterationInvariantRate);
  state.counters["sol_pct"] = Counter(100.0 * sol_s, Counter::kIsIterationInvariantRate);
  state.counters["err"] = t.err;
  state.counters["bytes"] = t.bytes;
  state.counters["flops"] = t.flops;
  state.counters["launches"] = launches;
  state.counters["sm_mhz"] = sm_mhz;
  if (mode == Mode::cold) {
    state.counters["cold_batch"] = current.decision.cold_batch;
    state.counters["hold_us"] = 1e3 * current.decision.hold_ms;
    // The SM clock during the timed launches' holds (GpuTimer::hold_totals), beside sm_mhz after them.
    if (hold_mhz > 0) state.counters["hold_mhz"] = hold_mhz;
  }
  // SOLBENCH_HOT_TIMING=net: the graph's own launch as measured (its median and standard error over the
  // settling's pairs of replays), and whether each replay's time was taken net of it (1) or not (0: not
  // resolved, estimate_graph_launch).
  if (current.hot == HotTiming::net) {
    state.counters["graph_launch_us"] = 1e3 * current.graph_launch.median_ms;
    state.counters["graph_launch_se_us"] = 1e3 * current.graph_launch.standard_error_ms;
    state.counters["graph_launch_off"] = current.graph_launch.resolved ? 1 : 0;
  }
  for (const auto& [key, value] : t.counters) state.counters[key] = value;
}

void fail_case(benchmark::State& state, const std::string& case_name, const std::string& message) {
  g_failures.emplace(case_name, message);
  std::fprintf(stderr, "FAILED %s: %s\n", case_name.c_str(), message.c_str());
  state.SkipWithError(message.c_str());
}

namespace {
// A case that cannot run (Unsupported): skipped with the reason, not failed.
void skip_unsupported(benchmark::State& state, const std::string& reason) {
  const std::string msg = "skipped: " + reason;
  state.SkipWithError(msg.c_str());
}
}  // namespace

void register_case(const std::string& name, std::function<void(benchmark::State&)> fn) {
  // Google Benchmark does not catch exceptions: a CUDA error or a bad problem fails this case only.
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [name, fn](benchmark::State& st) {
    // What the case's earlier repetitions did. A case runs in every repetition or in none: refused once
    // (Unsupported), it is skipped with the same reason in the later ones without calling `fn`; failed once
    // (an exception, or `fn`'s own fail_case: verification), the later ones are not run; refused after a
    // timed run (a repetition, or one of Google Benchmark's calibration runs in the first; e.g. out of memory
    // only this time), it fails, loudly. Google Benchmark 1.7.1 and
    // 1.8.3 compute a case's statistics from its first repetition's: a first repetition that failed or was
    // skipped, followed by timed ones, crashes them (a null pointer in ComputeStats).
    struct History {
      bool timed = false;
      std::string refused, failed;
    };
    static std::map<std::string, History> history;
    History& h = history[name];
    const auto start = std::chrono::steady_clock::now();
    struct Count {  // on every way out of the body
      std::chrono::steady_clock::time_point start;
      ~Count() {
        ++g_wall.calls;
        g_wall.body_s += seconds_since(start);
      }
    } count{start};
    if (!h.failed.empty()) {
      st.SkipWithError(("not run: it failed in an earlier repetition: " + h.failed).c_str());
    } else if (!h.refused.empty()) {
      skip_unsupported(st, h.refused);
    } else {
      try {
        fn(st);
        if (const auto f = g_failures.find(name); f != g_failures.end()) h.failed = f->second;
        else h.timed = true;
      } catch (const Unsupported& e) {
        if (h.timed) {
          h.failed = std::string("refused after an earlier run of it was timed, so that its repetitions would not "
                                 "measure the same thing: ") + e.what();
          fail_case(st, name, h.failed);
        } else {
          skip_unsupported(st, h.refused = e.what());
        }
      } catch (const std::exception& e) {
        fail_case(st, name, h.failed = e.what());
      }
    }
    // Google Benchmark checks that all repetitions of a case report one iteration count, and aborts the
    // binary otherwise (session 43, c214: a case timed in one repetition and refused in two). A repetition
    // skipped before its loop reports 0; entering the loop once skipped runs no iteration and reports the
    // count the repetition was given, as a timed one does.
    if (st.iterations() == 0)
      for (auto _ : st) {
      }
  });
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  if (g_profile) b->Iterations(kProfileLaunches)->Repetitions(1);
}

int bench_main(int argc_in, char** argv_in, const BenchSpec& spec) {
  const std::string command = join_args(argc_in, argv_in);
  std::vector<char*> args(argv_in, argv_in + argc_in);
  args.insert(args.begin() + 1, const_cast<char**>(std::begin(kDefaultFlags)), const_cast<char**>(std::end(kDefaultFlags)));
  args.push_back(nullptr);
  int argc = static_cast<int>(args.size()) - 1;
  char** argv = args.data();
  Options opt;
  std::vector<std::pair<std::string, std::string>> op_context;
  try {
    opt = extract_options(&argc, argv);
    g_profile = opt.profile;
    static std::string help;  // GB's help printer takes no arguments
    help = options_help(spec.shapes_grammar);
    benchmark::Initialize(&argc, argv, [] {
      benchmark::PrintDefaultHelp();
      std::fputs(help.c_str(), stdout);
    });
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return kUsageExit;
    for (auto [floor, launch] : {std::pair{"empty_kernel", launch_empty_kernel},
                                 std::pair{"empty_kernel_pdl", launch_empty_kernel_pdl}})
      for (Mode m : {Mode::cold, Mode::hot}) {
        const std::string name = std::string("floor/") + floor + "/" + mode_name(m);
        register_case(name, [m, name, launch = launch](benchmark::State& st) { run_timed(st, m, Timed{name, launch}); });
      }
    spec.register_cases(opt);
    TimerSettings::from_env();  // the SOLBENCH_* settings checked before anything runs (GpuTimer reads them)
    if (spec.context) op_context = spec.context();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", spec.binary.c_str(), e.what());
    return kUsageExit;
  } catch (const std::invalid_argument& e) {  // a bad SOLBENCH_* value
    std::fprintf(stderr, "%s: error: %s\n", spec.binary.c_str(), e.what());
    return kUsageExit;
  }
  if (opt.list_only) {
    benchmark::RunSpecifiedBenchmarks();
    return 0;
  }
  if (const std::string why = gpu_unavailable_reason(); !why.empty()) {
    std::fprintf(stderr, "%s: no usable CUDA device (%s); nothing was measured\n", spec.binary.c_str(), why.c_str());
    return kNoGpuExit;
  }
  try {
    g_env = std::make_unique<Env>();
    g_env->device = device_info();
    g_env->ceilings = measure_ceilings(g_env->stream.get());
    add_context(*g_env, spec, op_context, command, opt.random_interleaving);
    std::fprintf(stderr, "%s: %s, copy ceiling %.0f GB/s, bf16 GEMM ceiling %.0f TFLOP/s\n", spec.binary.c_str(),
                 g_env->device.name.c_str(), g_env->ceilings.copy_gbps, g_env->ceilings.gemm_tflops);
    const auto run_start = std::chrono::steady_clock::now();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    const WallTime& w = g_wall;
    std::fprintf(stderr,
                 "%s: %.1f s, of it %.1f s in %ld calls of case bodies: %.1f s setting cases up (inputs, references, "
                 "verification), %.1f s warming up, capturing and settling, %.1f s in timed loops\n",
                 spec.binary.c_str(), seconds_since(run_start), w.body_s, w.calls, w.body_s - w.warm_s - w.loop_s,
                 w.warm_s, w.loop_s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", spec.binary.c_str(), e.what());
    return 1;
  }
  if (!g_failures.empty()) {
    std::fprintf(stderr, "%s: %zu case(s) FAILED verification or raised an error:\n", spec.binary.c_str(), g_failures.size());
    for (const auto& [name, msg] : g_failures) std::fprintf(stderr, "  %s: %s\n", name.c_str(), msg.c_str());
    return 1;
  }
  return 0;
}

}  // namespace sb::bench
