// The suite's own command-line flags, taken out of argv before Google Benchmark sees the rest.
// Anything neither we nor Google Benchmark know is an error: message on stderr, exit code 2.
#pragma once

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/dtype.h"

namespace sb::bench {

// A bad flag or flag value. main() prints what() and exits with kUsageExit.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
inline constexpr int kUsageExit = 2;
// Exit status when no GPU is usable: ctest reports the smoke run as skipped (SKIP_RETURN_CODE).
inline constexpr int kNoGpuExit = 77;

struct Options {
  std::string shapes;   // --shapes=SPEC ("" = the binary's default set)
  std::vector<DType> dtypes{std::begin(kAllDTypes), std::end(kAllDTypes)};  // --dtypes=LIST, in kAllDTypes order
  bool profile = false;  // --profile: a fixed few launches per case, for ncu --nvtx
  // --split-sweep=anchors|all (bench_attention): the shapes where decode_splitk is also run at each forced
  // split count, the ANCHORS.md decode shapes in bf16 (the default) or every decode shape and dtype of the run.
  bool split_sweep_all = false;
  // --keep-inputs=GIB: the device memory (GiB, a decimal number >= 0) that the inputs of shapes not running may
  // keep between cases (harness/resident.h); < 0 (unset): the binary's default (resident_budget_bytes).
  double keep_inputs_gib = -1;
  bool list_only = false;  // --benchmark_list_tests given: register and list, touch no GPU
  // Google Benchmark's flags as it will read them (the last one given wins; bench_main puts its defaults before
  // the user's flags), left in argv for it. The run context records the case order; the partial results file
  // (harness/partial.h) goes beside --benchmark_out and tells a repetition's result from a calibration run
  // by the minimum time.
  bool random_interleaving = false;  // --benchmark_enable_random_interleaving
  std::string benchmark_out;         // --benchmark_out=FILE, "" without one
  int repetitions = 1;               // --benchmark_repetitions
  double min_time_s = 0.5;           // --benchmark_min_time in seconds (Google Benchmark's default 0.5)
  long long min_time_iterations = 0;  // --benchmark_min_time=<N>x (Google Benchmark >= 1.8): N iterations
};

// Removes our flags from argv (updating argc) and returns them. Throws UsageError for a malformed one, and for
// a malformed value of a Google Benchmark flag it passes on (check_gbench_flag).
Options extract_options(int* argc, char** argv);

// Google Benchmark rejects a numeric flag's bad value as an "unrecognized command-line flag" and reads any value
// of a boolean flag as true or false (gbench_truthy: "abc" is true). Checks one argument of the form
// --benchmark_<name>[=value] before Google Benchmark sees it: --benchmark_repetitions (a whole number >= 1),
// --benchmark_min_time (seconds >= 0, written 0.5 or 0.5s, or <N>x iterations), the boolean flags
// (--benchmark_enable_random_interleaving, --benchmark_display_aggregates_only,
// --benchmark_report_aggregates_only, --benchmark_list_tests: bare, or true/false, yes/no, on/off, 1/0, t/f,
// y/n in any case), --benchmark_format and --benchmark_out_format (console, json or csv) and
// --benchmark_out (a file name). Throws UsageError naming the flag and the value; other arguments pass.
void check_gbench_flag(const std::string& arg);

// Google Benchmark's reading of a boolean flag's value (1.7 / 1.8, IsTruthyFlagValue): "" (the bare flag) is
// true; one character is true unless it is 0, f, F, n, N or not alphanumeric; longer values are true unless
// they are false, no or off in any case.
bool gbench_truthy(const std::string& value);

// Help for our flags; `shapes_grammar` is the op's own paragraph.
std::string options_help(const std::string& shapes_grammar);

// A bad SOLBENCH_* environment setting: throws std::invalid_argument "NAME: takes, got 'value'"
// (bench_main prints it and exits with kUsageExit).
[[noreturn]] void bad_setting(const char* name, const std::string& takes, const char* got);
// A SOLBENCH_* setting that is a whole number: decimal digits only (no sign, space or suffix), from lo
// to hi; anything else is bad_setting(name, takes, value).
unsigned long long setting_count(const char* name, const char* value, unsigned long long lo, unsigned long long hi,
                                 const std::string& takes);

// Splits "a,b,,c" into {"a","b","c"}; an empty list is a UsageError naming `flag`.
std::vector<std::string> split_list(const std::string& value, const std::string& flag);

// A binary's named shape sets, in the order --help lists them: each name with the lists it joins.
template <typename Shape>
class NamedSets {
 public:
  using Parts = std::vector<const std::vector<Shape>*>;
  explicit NamedSets(std::vector<std::pair<std::string, Parts>> sets) : sets_(std::move(sets)) {}
  bool contains(const std::string& name) const { return find(name) != nullptr; }
  // "default, prefill, ...": for messages.
  std::string names() const {
    std::string out;
    for (const auto& [name, parts] : sets_) out += (out.empty() ? "" : ", ") + name;
    return out;
  }
  // The shapes of the named set; an unknown name is a UsageError that lists the names.
  std::vector<Shape> get(const std::string& name) const {
    const Parts* parts = find(name);
    if (parts == nullptr) throw UsageError("--shapes: unknown set '" + name + "' (sets: " + names() + ")");
    std::vector<Shape> out;
    for (const std::vector<Shape>* part : *parts) out.insert(out.end(), part->begin(), part->end());
    return out;
  }

 private:
  const Parts* find(const std::string& name) const {
    for (const auto& [n, parts] : sets_)
      if (n == name) return &parts;
    return nullptr;
  }
  std::vector<std::pair<std::string, Parts>> sets_;
};

// --shapes=SPEC for any op: each comma-separated item is a named set of `sets` or one shape
// (parse_one(item)); the result keeps the first of duplicates, in order.
template <typename Shape, typename ParseOne>
std::vector<Shape> parse_shape_spec(const std::string& spec, const NamedSets<Shape>& sets, ParseOne parse_one) {
  std::vector<Shape> out;
  auto add = [&](const Shape& s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  for (const std::string& item : split_list(spec, "--shapes")) {
    if (sets.contains(item)) {
      for (const Shape& s : sets.get(item)) add(s);
    } else {
      add(parse_one(item));
    }
  }
  return out;
}

// One token of a shape written as its case name: a key (letters) then a decimal value in [1, hi], or, with
// hi == 0, an optional flag that takes no value.
struct ShapeToken {
  const char* key;   // the token's prefix, e.g. "hkv"
  const char* what;  // the field it sets, for messages, e.g. "heads_kv"
  long long hi;      // the largest value (the smallest is 1); 0: a flag without a value
};
// One --shapes item written as a case name: tokens joined by '_', each a key of `tokens`, at most once and
// in the order of `tokens`, every valued token present. Returns each token's value in the order of
// `tokens` (a flag: 1 when present, else 0). Throws UsageError naming the item and what is wrong, with
// `form` (how a shape is written) and, for an item that is no shape at all, `sets` (the named sets).
std::vector<long long> parse_shape_tokens(const std::string& item, const std::vector<ShapeToken>& tokens,
                                          const std::string& form, const std::string& sets);

// Parses a whole decimal integer in [lo, hi]; anything else is a UsageError naming `what`.
long long parse_int(const std::string& s, long long lo, long long hi, const std::string& what);

}  // namespace sb::bench
