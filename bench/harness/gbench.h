// Glue between Google Benchmark and the GPU timer: one process-wide environment (device, stream,
// timer, ceilings), the timed loop for a case, the counters, failure bookkeeping and main().
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/ceilings.h"
#include "harness/cli.h"
#include "harness/device.h"
#include "harness/timer.h"

namespace sb::bench {

struct Env {
  DeviceInfo device;
  Ceilings ceilings;
  Stream stream;
  GpuTimer timer{stream.get()};
};
// Valid only once bench_main has found a GPU (benchmark bodies run after that).
Env& env();

// The byte budget of a binary's resident inputs (harness/resident.h): --keep-inputs' GiB, or, without the flag,
// `default_share` of the current device's memory (resident_budget_bytes).
std::size_t resident_budget(double keep_inputs_gib, double default_share);

// One timed case: what to launch and what it moves.
// Named counters an implementation adds to its cases (e.g. decode_splitk's split count).
using Counters = std::vector<std::pair<std::string, double>>;

struct Timed {
  std::string case_name;
  LaunchFn launch;
  CaptureFn capture = capture_cuda_graph;  // hot mode; PyTorch baselines bring their own
  double bytes = 0;
  double flops = 0;
  double err = 0;  // verification error / tolerance of this case (<= 1 passed)
  Counters counters = {};
};

// SetIterationTime for a case body's timed loop, its seconds also counted for the partial results file
// (harness/partial.h).
void set_iteration_time(benchmark::State& state, double seconds);

// The measurement loop: warm-up, then per GB iteration one cold launch or one hot replay; sets the
// time per launch (SetIterationTime) and the GB/s, TFLOP/s, sol_pct, err, bytes, flops, launches counters.
void run_timed(benchmark::State& state, Mode mode, const Timed& t);

// Thrown where a case cannot run (its implementation's supports() reason, no room for its inputs, a PyTorch
// baseline out of memory inside the hot graph's capture): register_case skips the case with the reason,
// SkipWithError("skipped: <reason>"), not a failure (Google Benchmark 1.7.1 has no SkipWithMessage; the
// scripts read the prefix), and never times it as if it had run.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A case that fails verification or throws: SkipWithError and remembered, so main exits 1.
void fail_case(benchmark::State& state, const std::string& case_name, const std::string& message);

// Registers `fn` under `name` (manual time, microseconds; fixed launches in profile mode). A case runs
// in every repetition or in none: a std::exception escaping `fn` (or `fn`'s own fail_case) fails it in that
// repetition, and the later ones are not run; Unsupported skips it in that repetition and the later ones,
// without calling `fn` again, unless a run of it was already timed: then it fails. Every repetition
// reports the same iteration count however it ended, so that Google Benchmark never aborts the binary.
void register_case(const std::string& name, std::function<void(benchmark::State&)> fn);

// Registers an op's grid of cases, "<op>/<impl>/<dtype>/<shape>/<mode>" for every shape x dtype x implementation
// x mode, in that order; make_body(shape, dtype, impl, mode, base, case_name) returns each case's body, where
// base is the name without its mode (one verification serves a case's two modes).
template <typename Shape, typename Impl, typename MakeBody>
void register_grid(const std::string& op, const std::vector<Shape>& shapes, const std::vector<DType>& dtypes,
                   const std::vector<Impl>& impls, MakeBody make_body) {
  for (const Shape& shape : shapes)
    for (DType dtype : dtypes)
      for (const Impl& impl : impls) {
        const std::string base = op + "/" + impl.name + "/" + std::string(name(dtype)) + "/" + shape.name();
        for (Mode mode : {Mode::cold, Mode::hot}) {
          const std::string case_name = base + "/" + mode_name(mode);
          register_case(case_name, make_body(shape, dtype, impl, mode, base, case_name));
        }
      }
}

// The partial results file (harness/partial.h) of a run whose Google Benchmark flags `opt` holds (its repetitions
// and minimum time tell a repetition's result from a calibration call): bench_main starts it beside
// --benchmark_out, with the run context, before the cases run, and ends (deletes) it once Google Benchmark has
// written --benchmark_out. start throws std::runtime_error naming a file it cannot write.
void start_partial_results(const std::string& path, const Options& opt, const std::string& executable);
void end_partial_results();

struct BenchSpec {
  std::string binary;          // "bench_rmsnorm"
  std::string shapes_grammar;  // the --shapes paragraph of --help
  std::string torch_version;   // "" without libtorch
  // Registers the op's cases for the parsed options; throws UsageError for a bad --shapes.
  std::function<void(const Options&)> register_cases;
  // The op's own run-context entries (name, value), recorded after the harness's; called once after the
  // flags are parsed, so it may throw std::invalid_argument for a bad setting (exit 2).
  std::function<std::vector<std::pair<std::string, std::string>>()> context;
};

// The run context's timing_protocol: "<version>: <one sentence per rule>" of how every case is timed (the
// version changes with the text). A run whose repetitions keep the registered order
// (--benchmark_enable_random_interleaving=false) records the text followed by kRegisteredOrderNote.
// regress.py warns when two runs' texts differ.
extern const char kTimingProtocol[];
extern const char kRegisteredOrderNote[];

// Parses flags (exit 2 on error), registers cases, lists them without a GPU if asked, otherwise needs
// a GPU (exit 77 without one), measures the ceilings, records the run context, runs, and returns 1 if
// any case failed verification.
int bench_main(int argc, char** argv, const BenchSpec& spec);

}  // namespace sb::bench
