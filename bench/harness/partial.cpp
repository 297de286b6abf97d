#include "harness/partial.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace sb::bench {

namespace {
constexpr long long kMaxIterations = 1000000000;  // Google Benchmark's kMaxIterations

// A JSON number; NaN and infinities as Python's json module reads them.
std::string json_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-Infinity" : "Infinity";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
}  // namespace

double finished_counter(const benchmark::Counter& c, double iterations, double manual_s) {
  double v = c.value;
  if (c.flags & benchmark::Counter::kIsRate) v /= manual_s;
  if (c.flags & benchmark::Counter::kIsIterationInvariant) v *= iterations;
  if (c.flags & benchmark::Counter::kAvgIterations) v /= iterations;
  if (c.flags & benchmark::Counter::kInvert) v = 1.0 / v;
  return v;  // kAvgThreads divides by the thread count: 1
}

bool is_repetition_result(bool first_result_done, bool explicit_iterations, bool error, long long iterations,
                          double manual_s, double min_time_s) {
  return first_result_done || explicit_iterations || error || iterations >= kMaxIterations || manual_s >= min_time_s;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string context_line(const std::vector<std::pair<std::string, std::string>>& context) {
  std::string line = "{\"context\": {";
  for (std::size_t i = 0; i < context.size(); ++i)
    line += (i ? ", " : "") + json_string(context[i].first) + ": " + json_string(context[i].second);
  return line + "}}";
}

std::string repetition_line(const RepetitionResult& r) {
  std::string line = "{\"name\": " + json_string(r.run_name) + ", \"run_name\": " + json_string(r.run_name) +
                     ", \"run_type\": \"iteration\", \"repetitions\": " + std::to_string(r.repetitions) +
                     ", \"repetition_index\": " + std::to_string(r.repetition_index) +
                     ", \"threads\": 1, \"iterations\": " + std::to_string(r.iterations);
  if (!r.error.empty()) return line + ", \"error_occurred\": true, \"error_message\": " + json_string(r.error) + "}";
  const double real_us = r.iterations > 0 ? 1e6 * r.manual_s / static_cast<double>(r.iterations) : 0.0;
  line += ", \"real_time\": " + json_number(real_us) + ", \"time_unit\": \"us\"";
  for (const auto& [name, value] : r.counters) line += ", " + json_string(name) + ": " + json_number(value);
  return line + "}";
}

std::string partial_path(const std::string& out) { return out + ".partial.jsonl"; }

PartialWriter::~PartialWriter() {
  if (f_) std::fclose(f_);
}

void PartialWriter::open(const std::string& path, const std::vector<std::pair<std::string, std::string>>& context) {
  if (f_) std::fclose(f_);
  path_ = path;
  f_ = std::fopen(path.c_str(), "w");
  if (!f_) throw std::runtime_error("cannot write the partial results file " + path + ": " + std::strerror(errno));
  write(context_line(context));
}

void PartialWriter::write(const std::string& line) {
  if (!f_) return;
  std::fputs(line.c_str(), f_);
  std::fputc('\n', f_);
  std::fflush(f_);
}

void PartialWriter::remove() {
  if (!f_) return;
  std::fclose(f_);
  f_ = nullptr;
  std::remove(path_.c_str());
}

}  // namespace sb::bench
