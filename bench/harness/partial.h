// A bench run's results as they finish: <--benchmark_out>.partial.jsonl, so that a run cut short (a time limit,
// SIGTERM, Ctrl-C, a crash in a late case) keeps every repetition it measured. Google Benchmark writes
// --benchmark_out whole only at the end, and reports a case to its reporters only once all the case's repetitions
// ran (1.7.1 and 1.8.3); with the repetitions interleaved at random most cases finish near the end, so a reporter
// would keep few of them. The harness writes each repetition from the case body instead (register_case).
// The file: one line {"context": {...}}, then one line a repetition in Google Benchmark's JSON field names (name,
// run_name, run_type "iteration", repetitions, repetition_index, iterations, real_time, time_unit,
// error_occurred and error_message, the counters), each line flushed as written. scripts/sbresults.py reads it;
// bench_main removes it once Google Benchmark has written --benchmark_out.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace sb::bench {

// One repetition of a case as Google Benchmark reports it (manual time, one thread, microseconds).
struct RepetitionResult {
  std::string run_name;  // Google Benchmark's name of the case, e.g. "<case>/manual_time"
  int repetitions = 1;
  int repetition_index = 0;
  long long iterations = 0;
  double manual_s = 0;  // the sum of the repetition's SetIterationTime seconds
  std::string error;    // its SkipWithError message, "" when it ran
  std::vector<std::pair<std::string, double>> counters;  // as reported (finished_counter)
};

// A counter's value as Google Benchmark reports it (its Finish, one thread): a rate over the manual time, an
// iteration-invariant value times the iterations, an average over them, inverted last.
double finished_counter(const benchmark::Counter& c, double iterations, double manual_s);

// Whether a call of a case body gives its repetition's result, as Google Benchmark decides for a manual-time
// case (ShouldReportIterationResults, 1.7.1 and 1.8.3): every call after the case's first result does (later
// repetitions run the first one's iteration count); before it, a call does when the iterations are fixed
// (Iterations, --benchmark_min_time=<N>x), the call was skipped with an error, it ran 1e9 iterations or its
// manual time reached the minimum time. The other calls find the iteration count and are not reported.
bool is_repetition_result(bool first_result_done, bool explicit_iterations, bool error, long long iterations,
                          double manual_s, double min_time_s);

std::string json_string(const std::string& s);  // a JSON string literal, quotes included
// The file's first line: {"context": {...}}, the entries as given (strings).
std::string context_line(const std::vector<std::pair<std::string, std::string>>& context);
// One repetition's line (no newline).
std::string repetition_line(const RepetitionResult& r);
// Where the partial results of --benchmark_out=`out` go.
std::string partial_path(const std::string& out);

// The open partial results file.
class PartialWriter {
 public:
  PartialWriter() = default;
  PartialWriter(const PartialWriter&) = delete;
  PartialWriter& operator=(const PartialWriter&) = delete;
  ~PartialWriter();
  // Creates (or empties) `path` and writes the context line; throws std::runtime_error naming the file.
  void open(const std::string& path, const std::vector<std::pair<std::string, std::string>>& context);
  bool is_open() const { return f_ != nullptr; }
  // Appends `line` and a newline and flushes them to the operating system, where they outlive the process.
  void write(const std::string& line);
  // Closes the file and deletes it.
  void remove();

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
};

}  // namespace sb::bench
