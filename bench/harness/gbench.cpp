#include "harness/gbench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/check.h"
#include "harness/build_info.h"
#include "harness/nvtx.h"
#include "harness/partial.h"
#include "harness/resident.h"

namespace sb::bench {

namespace {

// Defaults for Google Benchmark's own flags, placed before the user's (the last value given wins).
// Set as flags, not per benchmark, so that case names carry no "/min_time:..." suffix and stay stable
// (bench_main passes --benchmark_min_time on in the form this build's Google Benchmark reads).
// min_time counts kernel time (manual time): 10 ms of it per repetition. Google Benchmark's own warm-up is
// not used: run_timed warms each case up. The repetitions of all cases run in random order: a
// power-limited launch's clock depends on the seconds of work before it, which the registered order makes
// the same kind of work for every repetition of a case.
const char* const kDefaultFlags[] = {"--benchmark_min_time=0.01s", "--benchmark_enable_random_interleaving=true"};
// The warm-up a case gets before each repetition's timed launches. First at least 3 launches and kWarmUpMs
// of GPU time (at most kMaxWarmUpLaunches): module load, allocator caches, and the launch times the case is
// sized from. Then (not with --profile) the timed loop itself, times discarded, until kSettleMs of wall time
// has passed since the warm-up began: a launch that draws enough power sets its own SM clock within tens of
// milliseconds, at a level that depends on the duty cycle of the work, so each case is timed at the clock
// its own loop settles at rather than at one left by the cases before it.
constexpr double kWarmUpMs = 1.0;
constexpr int kMaxWarmUpLaunches = 1000;
constexpr double kSettleMs = 100.0;
constexpr int kProfileLaunches = 3;
constexpr double kHotMaxLaunchMs = 10.0;  // longer launches are not measured hot (warm_up_case says why)
constexpr double kMaxHoldMs = 1.0;        // cap of the cold-launch hold

std::unique_ptr<Env> g_env;
bool g_profile = false;
std::map<std::string, std::string> g_failures;  // case -> message

// The partial results file (harness/partial.h), open while a run with --benchmark_out measures; the run context
// as recorded (it is the file's first line); what register_case needs to tell a repetition's result from Google
// Benchmark's calibration calls; and the current call's manual time and error message.
PartialWriter g_partial;
std::vector<std::pair<std::string, std::string>> g_context;
Options g_options;
double g_call_manual_s = 0;
std::string g_call_error;

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

void put(const std::string& name, const std::string& value) {
  benchmark::AddCustomContext(name, value);
  g_context.emplace_back(name, value);
}

// Google Benchmark's form of the context's date, e.g. 2026-11-29T16:40:12+00:00.
std::string local_date() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
  std::string date = buf;
  if (date.size() >= 2) date.insert(date.size() - 2, ":");
  return date;
}

void add_context(const Env& e, const BenchSpec& spec, const std::vector<std::pair<std::string, std::string>>& op_context,
                 const std::string& command, bool random_interleaving) {
  const DeviceInfo& d = e.device;
  put("gpu_name", d.name);
  put("gpu_uuid", d.uuid);
  put("compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
  put("sm_count", std::to_string(d.sm_count));
  put("l2_bytes", std::to_string(d.l2_bytes));
  put("sm_clock_mhz", std::to_string(d.sm_clock_khz / 1000));
  put("mem_clock_mhz", std::to_string(d.mem_clock_khz / 1000));
  put("mem_bus_bits", std::to_string(d.mem_bus_bits));
  put("driver", std::to_string(d.driver_version / 1000) + "." + std::to_string(d.driver_version % 1000 / 10));
  put("nvidia_driver", d.nvidia_driver);
  put("cuda_runtime", std::to_string(d.runtime_version / 1000) + "." + std::to_string(d.runtime_version % 1000 / 10));
  put("torch_version", spec.torch_version.empty() ? "none" : spec.torch_version);
  put("git_commit", kGitCommit);
  put("kernels_fingerprint", kKernelsFingerprint);
  for (const std::string& entry : split_list(kKernelsFingerprintPerOp, "kernels fingerprints")) {
    const auto eq = entry.find('=');
    put("kernels_fingerprint_" + entry.substr(0, eq), entry.substr(eq + 1));
  }
  put("build_type", kBuildType);
  put("cuda_architectures", kCudaArchitectures);
  put("copy_gbps", fmt(e.ceilings.copy_gbps, "%.1f"));
  put("gemm_tflops", fmt(e.ceilings.gemm_tflops, "%.1f"));
  put("gemm_fp8_tflops",
      e.ceilings.gemm_fp8_tflops > 0 ? fmt(e.ceilings.gemm_fp8_tflops, "%.1f") : "none: " + e.ceilings.gemm_fp8_note);
  put("flush_bytes", std::to_string(e.timer.flush_bytes()));
  {
    std::size_t persisting = 0;
    SB_CUDA_CHECK(cudaDeviceGetLimit(&persisting, cudaLimitPersistingL2CacheSize));
    put("persisting_l2_bytes", std::to_string(persisting));  // the set-aside's size
  }
  // regress.py warns when two runs' texts differ.
  put("timing_protocol", random_interleaving ? std::string(kTimingProtocol)
                                                                     : std::string(kTimingProtocol) + kRegisteredOrderNote);
  for (const auto& [name, value] : op_context) put(name, value);
  put("profile_mode", g_profile ? "true" : "false");
  put("binary_command", command);
  // The script command that produced the run (scripts/run_suite.sh sets it), else this binary's.
  const char* run_command = std::getenv("SOLBENCH_RUN_COMMAND");
  put("command", run_command && *run_command ? run_command : command);
}

}  // namespace

const char kTimingProtocol[] =
    "1: Each case warms up with at least 3 launches and 1 ms of GPU time, then runs its timed loop untimed until "
    "100 ms of wall time have passed. "
    "The cold batch and the hot K are sized from the median warm-up launch. "
    "Cold launches are queued in batches of at most 4 behind one uncounted launch, each preceded by the previous "
    "launch's end, a reset of the L2's persisting lines, an L2-sized memset flush and a hold of twice the launch's "
    "host time (at most 1 ms). "
    "Hot launches are a CUDA graph of K launches, K sized for a 50 us window, each replay timed net of the graph's "
    "own launch (the median of 2 t(K) - t(2K) over the settling's replays, where over 3 standard errors) over K. "
    "The repetitions of all cases run in random order, each warmed up and settled.";
const char kRegisteredOrderNote[] =
    " This run: the repetitions in registered order (--benchmark_enable_random_interleaving=false).";
static_assert(GpuTimer::kMaxColdBatch == 4 && kWarmUpMs == 1.0 && kSettleMs == 100.0 && kMaxHoldMs == 1.0 &&
                  kGraphLaunchResolvedSe == 3.0 && kHotWindowUs == 50,
              "kTimingProtocol states 4 launches a batch, 1 ms, 100 ms, a 1 ms hold cap, 3 standard errors and K "
              "sized for 50 us: change its text and its version with them");

Env& env() {
  if (!g_env) throw std::logic_error("sb::bench::env() used before bench_main found a GPU");
  return *g_env;
}

std::size_t resident_budget(double keep_inputs_gib, double default_share) {
  std::size_t free_bytes = 0, total = 0;
  SB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  return resident_budget_bytes(keep_inputs_gib, total, default_share);
}

namespace {

// What a case's first repetition decides from its warm-up, kept for all its repetitions so that each is
// timed the same way (and a case refused in its first, e.g. a hot launch over kHotMaxLaunchMs, is refused
// in all: register_case). With the repetitions interleaved a case's repetitions are not consecutive: each
// warms up and settles again, since its clock depends on what ran before it, but decides nothing again.
struct CaseDecision {
  int cold_batch = 1;
  double hold_ms = 0;
  int hot_launches = 0;
  int eager_launches = 0;
};

// The case whose launches are warm: its decision and its hot graph, captured again for each run of
// consecutive repetitions (the graph's buffers may not outlive the case's data when other cases run between).
struct CaseState {
  std::string name;
  Mode mode = Mode::cold;
  CaseDecision decision = {};
  std::unique_ptr<Replay> graph = nullptr;
  // Hot outside --profile: each replay is timed net of the graph's own launch, which the settling measures
  // from replays of `graph` and of `graph_2k` (twice the launches, freed before the timed loop).
  bool net = false;
  std::unique_ptr<Replay> graph_2k = nullptr;
  GraphLaunch graph_launch = {};
  // What a call costs the host (every case): the upper median of the warm-up's enqueue times, each the host's
  // wall time in the launch call with the GPU idle. Hot outside --profile, also the time per launch of
  // decision.eager_launches queued back to back without a graph (the upper median of kEagerTrials timings):
  // what a loop calling it eagerly pays, the larger of the host's time and the GPU's.
  double host_ms = 0;
  double eager_ms = 0;
};
constexpr int kEagerTrials = 3;

double ms_since(std::chrono::steady_clock::time_point t) { return 1e3 * seconds_since(t); }

// The warm-up's first part: at least 3 launches and kWarmUpMs of GPU time. The event-timed launch times and
// the host's enqueue times of all but the first launch, which pays one-time set-up.
struct WarmUp {
  std::vector<double> launch_ms, enqueue_ms;
};
WarmUp first_launches(GpuTimer& timer, const LaunchFn& launch) {
  WarmUp w;
  double total_ms = 0;
  for (int i = 0; i < 3 || (total_ms < kWarmUpMs && i < kMaxWarmUpLaunches); ++i) {
    const double one_ms = timer.warm_ms(launch);
    total_ms += one_ms;
    if (i == 0) continue;
    w.launch_ms.push_back(one_ms);
    w.enqueue_ms.push_back(timer.last_enqueue_ms());
  }
  return w;
}

CaseDecision decide(Mode mode, const WarmUp& w) {
  const double single_ms = sizing_launch_ms(w.launch_ms);
  CaseDecision d;
  d.hold_ms = std::min(2 * upper_median(w.enqueue_ms), kMaxHoldMs);
  d.cold_batch = g_profile ? 1 : cold_batch_count(single_ms);
  d.hot_launches = g_profile ? kProfileLaunches : hot_launch_count(single_ms);
  d.eager_launches = eager_launch_count(single_ms);
  if (mode == Mode::hot && single_ms > kHotMaxLaunchMs)
    throw Unsupported("hot mode is for launches that L2 residency and launch overhead can change; this one takes " +
                      fmt(single_ms, "%.1f") + " ms (over " + fmt(kHotMaxLaunchMs, "%.0f") +
                      " ms), the same cold or hot, and K of them in one graph only multiply its memory");
  return d;
}

// The warm-up's second part (not with --profile): the timed loop itself, times discarded, until kSettleMs
// of wall time since the warm-up began, so that the SM clock settles where this mode's duty cycle (flush,
// hold and batch synchronization, or graph replays) puts it. Net hot timing also takes the graph's own
// launch from the settling's pairs of replays (at least 3).
void settle(GpuTimer& timer, CaseState& c, const LaunchFn& launch, std::chrono::steady_clock::time_point since) {
  std::vector<double> graph_launch_samples;
  while (ms_since(since) < kSettleMs || (c.net && graph_launch_samples.size() < 3)) {
    if (c.mode == Mode::cold) {
      timer.cold_batch_ms(launch, c.decision.cold_batch, c.decision.hold_ms);
    } else {
      const double k_ms = timer.replay_ms(*c.graph);
      if (c.net) graph_launch_samples.push_back(graph_launch_ms(k_ms, timer.replay_ms(*c.graph_2k)));
    }
  }
  if (c.net) {
    c.graph_launch = estimate_graph_launch(std::move(graph_launch_samples));
    c.graph_2k.reset();  // its memory is not held through the timed loop
  }
}

// Makes `t` in `mode` the warm case: warm-up, decision (the first repetition's, kept in `decided`), hot
// graph capture, settling.
void warm_up_case(CaseState& c, std::map<std::pair<std::string, Mode>, CaseDecision>& decided, Mode mode,
                  const Timed& t, GpuTimer& timer) {
  c = CaseState{t.case_name, mode};
  const auto warm_up_start = std::chrono::steady_clock::now();
  const WarmUp w = first_launches(timer, t.launch);
  auto known = decided.find({t.case_name, mode});
  if (known == decided.end()) known = decided.emplace(std::pair{t.case_name, mode}, decide(mode, w)).first;
  c.decision = known->second;
  c.host_ms = upper_median(w.enqueue_ms);
  const cudaStream_t s = timer.stream();
  c.net = mode == Mode::hot && !g_profile;
  if (c.net) {
    std::vector<double> eager;
    for (int i = 0; i < kEagerTrials; ++i) eager.push_back(timer.eager_ms(t.launch, c.decision.eager_launches));
    c.eager_ms = upper_median(std::move(eager));
  }
  if (mode == Mode::hot) {
    c.graph = t.capture(s, c.decision.hot_launches, t.launch);
    c.graph->replay(s);
  }
  if (c.net) {
    c.graph_2k = t.capture(s, 2 * c.decision.hot_launches, t.launch);
    c.graph_2k->replay(s);
  }
  SB_CUDA_CHECK(cudaStreamSynchronize(s));
  if (!g_profile) settle(timer, c, t.launch, warm_up_start);
}

// One iteration's time per launch: cold, the median launch of a queued batch; hot, one replay over K
// (net of the graph's own launch where measured).
double iteration_ms(GpuTimer& timer, const CaseState& c, const LaunchFn& launch) {
  if (c.mode == Mode::cold) return upper_median(timer.cold_batch_ms(launch, c.decision.cold_batch, c.decision.hold_ms));
  const double replay_ms = timer.replay_ms(*c.graph);
  return c.net ? net_launch_ms(replay_ms, c.graph_launch.taken_off_ms(), c.graph->launches())
               : replay_ms / c.graph->launches();
}

void set_counters(benchmark::State& state, const Ceilings& ceilings, const Timed& t, const CaseState& c,
                  double sm_mhz, double hold_mhz) {
  using benchmark::Counter;
  const double sol_s = std::max(t.bytes / (ceilings.copy_gbps * 1e9), t.flops / (ceilings.gemm_tflops * 1e12));
  state.counters["GB/s"] = Counter(t.bytes * 1e-9, Counter::kIsIterationInvariantRate);
  state.counters["TFLOP/s"] = Counter(t.flops * 1e-12, Counter::kIsIterationInvariantRate);
  state.counters["sol_pct"] = Counter(100.0 * sol_s, Counter::kIsIterationInvariantRate);
  state.counters["err"] = t.err;
  state.counters["bytes"] = t.bytes;
  state.counters["flops"] = t.flops;
  state.counters["launches"] = c.mode == Mode::hot ? c.graph->launches() : 1;
  state.counters["sm_mhz"] = sm_mhz;
  state.counters["host_us"] = 1e3 * c.host_ms;
  if (c.eager_ms > 0) {
    state.counters["eager_us"] = 1e3 * c.eager_ms;
    state.counters["eager_launches"] = c.decision.eager_launches;
  }
  if (c.mode == Mode::cold) {
    state.counters["cold_batch"] = c.decision.cold_batch;
    state.counters["hold_us"] = 1e3 * c.decision.hold_ms;
    if (hold_mhz > 0) state.counters["hold_mhz"] = hold_mhz;  // the SM clock during the timed launches' holds
  }
  // The graph's own launch as measured, and whether each replay was taken net of it (1) or not (0: not
  // resolved, estimate_graph_launch).
  if (c.net) {
    state.counters["graph_launch_us"] = 1e3 * c.graph_launch.median_ms;
    state.counters["graph_launch_se_us"] = 1e3 * c.graph_launch.standard_error_ms;
    state.counters["graph_launch_off"] = c.graph_launch.resolved ? 1 : 0;
  }
  for (const auto& [key, value] : t.counters) state.counters[key] = value;
}

}  // namespace

void run_timed(benchmark::State& state, Mode mode, const Timed& t) {
  static CaseState current;
  static std::map<std::pair<std::string, Mode>, CaseDecision> decided;  // every case so far, by name and mode
  Env& e = env();
  GpuTimer& timer = e.timer;
  NvtxRange range(nvtx_name(t.case_name));

  const auto warm_start = std::chrono::steady_clock::now();
  if (current.name != t.case_name || current.mode != mode) try {
    warm_up_case(current, decided, mode, t, timer);
  } catch (...) {
    // Unsupported too (a PyTorch baseline out of memory in its hot graph's capture throws it from the
    // launch): register_case decides what the case's later repetitions do.
    g_wall.warm_s += seconds_since(warm_start);
    current = CaseState{};  // nothing half-built is reused by the next repetition
    throw;
  }
  g_wall.warm_s += seconds_since(warm_start);

  const GpuTimer::HoldTotals holds_before = mode == Mode::cold ? timer.hold_totals() : GpuTimer::HoldTotals{};
  const auto loop_start = std::chrono::steady_clock::now();
  for (auto _ : state) set_iteration_time(state, iteration_ms(timer, current, t.launch) * 1e-3);
  g_wall.loop_s += seconds_since(loop_start);
  const double hold_mhz = mode == Mode::cold ? timer.hold_totals().mhz_since(holds_before) : 0.0;
  const double sm_mhz = timer.probe_sm_mhz();  // after the timed launches, outside them
  set_counters(state, e.ceilings, t, current, sm_mhz, hold_mhz);
}

void set_iteration_time(benchmark::State& state, double seconds) {
  g_call_manual_s += seconds;
  state.SetIterationTime(seconds);
}

namespace {
// SkipWithError, the message kept for the partial results file.
void skip_with_error(benchmark::State& state, const std::string& message) {
  g_call_error = message;
  state.SkipWithError(message.c_str());
}
}  // namespace

void fail_case(benchmark::State& state, const std::string& case_name, const std::string& message) {
  g_failures.emplace(case_name, message);
  std::fprintf(stderr, "FAILED %s: %s\n", case_name.c_str(), message.c_str());
  skip_with_error(state, message);
}

namespace {
// A case that cannot run (Unsupported): skipped with the reason, not failed.
void skip_unsupported(benchmark::State& state, const std::string& reason) { skip_with_error(state, "skipped: " + reason); }

// Appends the call of case `name` that just ended to the partial results file when it gives a repetition's result
// (is_repetition_result); `results` counts the case's results so far.
void record_call(const benchmark::State& st, const std::string& name, int& results) {
  const bool error = !g_call_error.empty();
  const long long iterations = st.iterations();
  if (!g_partial.is_open() ||
      !is_repetition_result(results > 0, g_profile || g_options.min_time_iterations > 0, error, iterations,
                            g_call_manual_s, g_options.min_time_s))
    return;
  RepetitionResult r;
  r.run_name = name + (g_profile ? "/iterations:" + std::to_string(kProfileLaunches) + "/repeats:1" : "") + "/manual_time";
  r.repetitions = g_profile ? 1 : g_options.repetitions;
  r.repetition_index = results++;
  r.iterations = iterations;
  r.manual_s = g_call_manual_s;
  r.error = g_call_error;
  if (!error)
    for (const auto& [key, counter] : st.counters)
      r.counters.emplace_back(key, finished_counter(counter, static_cast<double>(iterations), g_call_manual_s));
  g_partial.write(repetition_line(r));
}
}  // namespace

void register_case(const std::string& name, std::function<void(benchmark::State&)> fn) {
  // Google Benchmark does not catch exceptions: a CUDA error or a bad problem fails this case only.
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [name, fn](benchmark::State& st) {
    // What the case's earlier repetitions did. A case runs in every repetition or in none: refused once
    // (Unsupported), it is skipped with the same reason in the later ones without calling `fn`; failed once
    // (an exception, or `fn`'s own fail_case: verification), the later ones are not run; refused after a
    // timed run (a repetition, or one of Google Benchmark's calibration runs in the first; e.g. out of memory
    // only this time), it fails, loudly. Google Benchmark 1.7.1 and 1.8.3 compute a case's statistics from
    // its first repetition's: a first repetition that failed or was skipped, followed by timed ones, crashes
    // them (a null pointer in ComputeStats).
    struct History {
      bool timed = false;
      std::string refused, failed;
      int results = 0;  // repetitions that gave a result (record_call)
    };
    static std::map<std::string, History> history;
    History& h = history[name];
    g_call_manual_s = 0;
    g_call_error.clear();
    const auto start = std::chrono::steady_clock::now();
    struct Count {  // on every way out of the body
      std::chrono::steady_clock::time_point start;
      ~Count() {
        ++g_wall.calls;
        g_wall.body_s += seconds_since(start);
      }
    } count{start};
    if (!h.failed.empty()) {
      skip_with_error(st, "not run: it failed in an earlier repetition: " + h.failed);
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
    // binary otherwise (a case timed in one repetition and refused in another). A repetition
    // skipped before its loop reports 0; entering the loop once skipped runs no iteration and reports the
    // count the repetition was given, as a timed one does.
    if (st.iterations() == 0)
      for (auto _ : st) {
      }
    record_call(st, name, h.results);
  });
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  if (g_profile) b->Iterations(kProfileLaunches)->Repetitions(1);
}

void start_partial_results(const std::string& path, const Options& opt, const std::string& executable) {
  g_options = opt;
  auto context = g_context;
  context.insert(context.begin(), {{"date", local_date()}, {"executable", executable}});
  g_partial.open(path, context);
}

void end_partial_results() { g_partial.remove(); }

namespace {
// Google Benchmark 1.8 wants a unit on --benchmark_min_time (0.5s; <N>x for iterations), 1.7.1 takes plain seconds
// and rejects a unit: each --benchmark_min_time (its value checked by extract_options) is passed on in this
// build's form.
void min_time_for_this_gbench(int argc, char** argv) {
  static std::deque<std::string> rewritten;  // argv points into it until Google Benchmark has read it
  const std::string flag = "--benchmark_min_time=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], flag.c_str(), flag.size()) != 0) continue;
    std::string v = argv[i] + flag.size();
    if (v.back() == 'x') {
      if (!SOLBENCH_GBENCH_MIN_TIME_SUFFIX)
        throw UsageError("--benchmark_min_time=" + v + ": iterations (<N>x) need Google Benchmark 1.8; this build has "
                         "1.7, which takes seconds");
      continue;
    }
    if (v.back() == 's') v.pop_back();
    rewritten.push_back(flag + v + (SOLBENCH_GBENCH_MIN_TIME_SUFFIX ? "s" : ""));
    argv[i] = rewritten.back().data();
  }
}
}  // namespace

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
    min_time_for_this_gbench(argc, argv);
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
    if (spec.context) op_context = spec.context();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", spec.binary.c_str(), e.what());
    return kUsageExit;
  } catch (const std::invalid_argument& e) {  // a bad setting of the op's (spec.context)
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
    if (!opt.benchmark_out.empty()) start_partial_results(partial_path(opt.benchmark_out), opt, argv_in[0]);
    std::fprintf(stderr, "%s: %s, copy ceiling %.0f GB/s, bf16 GEMM ceiling %.0f TFLOP/s\n", spec.binary.c_str(),
                 g_env->device.name.c_str(), g_env->ceilings.copy_gbps, g_env->ceilings.gemm_tflops);
    const auto run_start = std::chrono::steady_clock::now();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    end_partial_results();  // Google Benchmark has written --benchmark_out whole
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
