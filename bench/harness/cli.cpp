#include "harness/cli.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "harness/resident.h"

namespace sb::bench {

namespace {
constexpr double kMaxKeepInputsGib = 1 << 20;  // a typo's size is refused
bool starts_with(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

std::vector<DType> parse_dtypes(const std::string& value) {
  std::vector<bool> chosen(std::size(kAllDTypes), false);
  for (const std::string& item : split_list(value, "--dtypes")) {
    const std::optional<DType> t = parse_dtype(item);
    if (!t) throw UsageError("--dtypes: unknown dtype '" + item + "' (fp32, fp16, bf16)");
    for (std::size_t i = 0; i < chosen.size(); ++i) chosen[i] = chosen[i] || kAllDTypes[i] == *t;
  }
  std::vector<DType> out;
  for (std::size_t i = 0; i < chosen.size(); ++i)
    if (chosen[i]) out.push_back(kAllDTypes[i]);
  return out;
}
// "--benchmark_<name>[=value]": the flag, whether it has a value, and the value.
struct FlagArg {
  std::string flag;
  bool has_value;
  std::string value;
};
FlagArg split_flag(const std::string& arg) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos) return {arg, false, ""};
  return {arg.substr(0, eq), true, arg.substr(eq + 1)};
}

const char* const kBoolFlags[] = {"--benchmark_enable_random_interleaving", "--benchmark_display_aggregates_only",
                                  "--benchmark_report_aggregates_only", "--benchmark_list_tests"};
const char* const kBoolWords[] = {"", "true", "false", "yes", "no", "on", "off", "1", "0", "t", "f", "y", "n"};
const char* const kFormats[] = {"console", "json", "csv"};

template <std::size_t N>
bool one_of(const std::string& v, const char* const (&words)[N]) {
  return std::find(std::begin(words), std::end(words), v) != std::end(words);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

[[noreturn]] void bad_flag_value(const FlagArg& f, const std::string& takes) {
  throw UsageError(f.flag + " takes " + takes + ", got '" + f.value + "'");
}

// A decimal number >= 0 (no sign, no space, finite), or nullopt.
std::optional<double> non_negative_decimal(const std::string& v) {
  if (v.empty() || !(std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '.')) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (*end != '\0' || !std::isfinite(d)) return std::nullopt;
  return d;
}

constexpr const char* kMinTimeTakes = "seconds, a number >= 0 (0.5 or 0.5s), or <N>x iterations";

// --benchmark_min_time's value: seconds (with or without the unit s), or <N>x, N >= 1 iterations.
void read_min_time(const FlagArg& f, Options& o) {
  const std::string& v = f.value;
  if (!v.empty() && v.back() == 'x') {
    const std::string n = v.substr(0, v.size() - 1);
    if (n.empty() || n.size() > 18 || n.find_first_not_of("0123456789") != std::string::npos || std::stoll(n) < 1)
      bad_flag_value(f, kMinTimeTakes);
    o.min_time_iterations = std::stoll(n);
    return;
  }
  const std::optional<double> s = non_negative_decimal(!v.empty() && v.back() == 's' ? v.substr(0, v.size() - 1) : v);
  if (!s) bad_flag_value(f, kMinTimeTakes);
  o.min_time_s = *s;
  o.min_time_iterations = 0;
}

// Checks a --benchmark_ flag (check_gbench_flag) and records in `o` what the harness reads of it.
void read_gbench_flag(const std::string& arg, Options& o) {
  check_gbench_flag(arg);
  const FlagArg f = split_flag(arg);
  if (f.flag == "--benchmark_list_tests") o.list_only = gbench_truthy(f.value);  // Google Benchmark lists
  if (f.flag == "--benchmark_enable_random_interleaving") o.random_interleaving = gbench_truthy(f.value);
  if (f.flag == "--benchmark_out") o.benchmark_out = f.value;
  if (f.flag == "--benchmark_repetitions") o.repetitions = std::stoi(f.value);
  if (f.flag == "--benchmark_min_time") read_min_time(f, o);
}
}  // namespace

void check_gbench_flag(const std::string& arg) {
  const FlagArg f = split_flag(arg);
  const bool is_bool = one_of(f.flag, kBoolFlags);
  if (!f.has_value && !is_bool &&
      (f.flag == "--benchmark_repetitions" || f.flag == "--benchmark_min_time" || f.flag == "--benchmark_format" ||
       f.flag == "--benchmark_out_format" || f.flag == "--benchmark_out"))
    throw UsageError(f.flag + " needs a value: write " + f.flag + "=VALUE (see --help)");
  if (is_bool && !one_of(lower(f.value), kBoolWords))
    bad_flag_value(f, "true or false (also yes/no, on/off, 1/0)");
  if (f.flag == "--benchmark_repetitions" &&
      (f.value.empty() || f.value.size() > 9 || f.value.find_first_not_of("0123456789") != std::string::npos ||
       std::stoi(f.value) < 1))
    bad_flag_value(f, "a whole number of repetitions >= 1");
  if (f.flag == "--benchmark_min_time") {
    Options scratch;
    read_min_time(f, scratch);
  }
  if ((f.flag == "--benchmark_format" || f.flag == "--benchmark_out_format") && !one_of(f.value, kFormats))
    bad_flag_value(f, "console, json or csv");
  if (f.flag == "--benchmark_out" && f.value.empty()) bad_flag_value(f, "a file name");
}

Options extract_options(int* argc, char** argv) {
  Options o;
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    const char* a = argv[i];
    if (starts_with(a, "--shapes=")) {
      o.shapes = a + std::strlen("--shapes=");
      if (o.shapes.empty()) throw UsageError("--shapes= needs a value (see --help)");
      continue;
    }
    if (std::strcmp(a, "--shapes") == 0) throw UsageError("--shapes needs a value: write --shapes=SPEC (see --help)");
    if (starts_with(a, "--dtypes=")) {
      o.dtypes = parse_dtypes(a + std::strlen("--dtypes="));
      continue;
    }
    if (std::strcmp(a, "--dtypes") == 0) throw UsageError("--dtypes needs a value: write --dtypes=bf16,fp16 (see --help)");
    if (std::strcmp(a, "--profile") == 0) {
      o.profile = true;
      continue;
    }
    if (starts_with(a, "--profile=")) throw UsageError("--profile takes no value");
    if (starts_with(a, "--split-sweep=")) {
      const std::string v = a + std::strlen("--split-sweep=");
      if (v != "anchors" && v != "all") throw UsageError("--split-sweep takes anchors or all, got '" + v + "'");
      o.split_sweep_all = v == "all";
      continue;
    }
    if (std::strcmp(a, "--split-sweep") == 0) throw UsageError("--split-sweep needs a value: anchors or all");
    if (starts_with(a, "--keep-inputs=")) {
      const std::string v = a + std::strlen("--keep-inputs=");
      char* end = nullptr;
      const double gib = v.empty() || !(std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '.')
                             ? -1.0
                             : std::strtod(v.c_str(), &end);
      if (gib < 0 || end == nullptr || *end != '\0' || !(gib <= kMaxKeepInputsGib))
        throw UsageError("--keep-inputs takes GiB of device memory, a number from 0 to " +
                         std::to_string(static_cast<int>(kMaxKeepInputsGib)) + ", got '" + v + "'");
      o.keep_inputs_gib = gib;
      continue;
    }
    if (std::strcmp(a, "--keep-inputs") == 0) throw UsageError("--keep-inputs needs a value in GiB, e.g. --keep-inputs=20");
    if (starts_with(a, "--benchmark_")) read_gbench_flag(a, o);  // left in argv for Google Benchmark
    argv[out++] = argv[i];
  }
  *argc = out;
  argv[out] = nullptr;
  return o;
}

std::size_t resident_budget_bytes(double keep_inputs_gib, std::size_t device_total_bytes, double default_share) {
  if (keep_inputs_gib < 0) return static_cast<std::size_t>(default_share * static_cast<double>(device_total_bytes));
  return static_cast<std::size_t>(keep_inputs_gib * static_cast<double>(1ull << 30));
}

bool gbench_truthy(const std::string& value) {
  if (value.size() == 1) {
    const char v = value[0];
    return std::isalnum(static_cast<unsigned char>(v)) && v != '0' && v != 'f' && v != 'F' && v != 'n' && v != 'N';
  }
  std::string lower = value;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower != "false" && lower != "no" && lower != "off";
}

std::string options_help(const std::string& shapes_grammar) {
  return "\nsolbench options (besides Google Benchmark's, above):\n"
         "  --shapes=SPEC   run these shapes instead of the default set.\n" +
         shapes_grammar +
         "  --dtypes=LIST   only these dtypes, comma-separated: fp32, fp16, bf16 (default: all three).\n"
         "  --profile       run each case for a fixed 3 launches after 3 warm-up launches (no timing loop),\n"
         "                  for ncu --nvtx --nvtx-include 'solbench@<case with : for />/'.\n"
         "  --split-sweep=anchors|all  (bench_attention) where decode_splitk also runs at each forced split\n"
         "                  count (decode_splitk_s<N>, cold): the ANCHORS.md decode shapes in bf16 (default) or\n"
         "                  every decode shape and dtype of the run.\n"
         "  --keep-inputs=GIB  device memory the inputs of shapes not running may keep between cases, so that\n"
         "                  the interleaved repetitions do not rebuild them (default: a third of the GPU's\n"
         "                  memory, none in bench_attention, whose PyTorch baselines need up to 64 GiB at the\n"
         "                  largest shapes; 0 keeps only the running shape's).\n"
         "Every case is verified against a reference before it is timed; a failure is reported as an\n"
         "error for that case and the binary exits with status 1. A bad flag exits with status 2;\n"
         "no usable GPU exits with status 77. With --benchmark_out=FILE each finished repetition is also\n"
         "appended to FILE.partial.jsonl, deleted when the run ends normally: a run cut short keeps them.\n";
}

std::vector<std::string> split_list(const std::string& value, const std::string& flag) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t comma = value.find(',', start);
    const std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (items.empty()) throw UsageError(flag + ": empty list");
  return items;
}

void bad_setting(const char* name, const std::string& takes, const char* got) {
  throw std::invalid_argument(std::string(name) + ": " + takes + ", got '" + got + "'");
}

unsigned long long setting_count(const char* name, const char* value, unsigned long long lo, unsigned long long hi,
                                 const std::string& takes) {
  const std::string v = value;
  if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos) bad_setting(name, takes, value);
  const unsigned long long n = std::stoull(v);  // at most 19 digits: no overflow
  if (n < lo || n > hi) bad_setting(name, takes, value);
  return n;
}

long long parse_int(const std::string& s, long long lo, long long hi, const std::string& what) {
  if (s.empty() || s[0] == '+' || s[0] == '-' || s[0] == ' ')
    throw UsageError(what + ": '" + s + "' is not a positive integer");
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') throw UsageError(what + ": '" + s + "' is not a positive integer");
  if (v < lo || v > hi)
    throw UsageError(what + ": " + s + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

std::vector<long long> parse_shape_tokens(const std::string& item, const std::vector<ShapeToken>& fields,
                                          const std::string& form, const std::string& sets) {
  const std::string in = "' in '" + item + "'";
  std::vector<std::string> tokens;
  for (std::size_t start = 0;;) {
    const std::size_t u = item.find('_', start);
    tokens.push_back(item.substr(start, u == std::string::npos ? std::string::npos : u - start));
    if (u == std::string::npos) break;
    start = u + 1;
  }
  auto field_index = [&fields](const std::string& key) {
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (key == fields[i].key) return static_cast<int>(i);
    return -1;
  };

  // Each token is a key (letters) then a value (the rest).
  std::vector<int> index(tokens.size());
  std::vector<std::string> value(tokens.size());
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const std::string& tok = tokens[t];
    if (tok.empty())
      throw UsageError("--shapes: empty token (a doubled, leading or trailing '_') in '" + item + "'; a shape is " +
                       form);
    std::size_t k = 0;
    while (k < tok.size() && std::isalpha(static_cast<unsigned char>(tok[k]))) ++k;
    index[t] = field_index(tok.substr(0, k));
    value[t] = tok.substr(k);
    if (index[t] < 0) {
      if (tokens.size() == 1)
        throw UsageError("--shapes: '" + item + "' is neither a shape (" + form + ") nor a named set (" + sets + ")");
      throw UsageError("--shapes: unknown token '" + tok + in + "; a shape is " + form);
    }
  }
  for (std::size_t t = 0; t < tokens.size(); ++t)
    for (std::size_t u = 0; u < t; ++u)
      if (index[u] == index[t])
        throw UsageError("--shapes: token '" + std::string(fields[index[t]].key) + "' repeated in '" + item + "'");
  for (const ShapeToken& f : fields) {
    if (f.hi == 0) continue;  // optional flag
    if (std::find(index.begin(), index.end(), field_index(f.key)) == index.end())
      throw UsageError("--shapes: missing token " + std::string(f.key) + "<" + f.what + "> in '" + item +
                       "'; a shape is " + form);
  }
  for (std::size_t t = 1; t < tokens.size(); ++t)
    if (index[t] < index[t - 1])
      throw UsageError("--shapes: token '" + tokens[t] + "' out of order in '" + item + "'; write " + form);

  std::vector<long long> out(fields.size(), 0);
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const ShapeToken& f = fields[index[t]];
    if (f.hi == 0) {
      if (!value[t].empty())
        throw UsageError("--shapes: unknown token '" + tokens[t] + in + " (" + f.key + " takes no value)");
      out[index[t]] = 1;
    } else {
      out[index[t]] =
          parse_int(value[t], 1, f.hi, "--shapes: " + std::string(f.what) + " (token '" + tokens[t] + in + ")");
    }
  }
  return out;
}

}  // namespace sb::bench
