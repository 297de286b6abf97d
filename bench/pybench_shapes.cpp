#include "pybench_shapes.h"

#include <algorithm>

#include "harness/cli.h"

namespace sb::bench {

namespace {

// A parser's reason without its "--shapes: " prefix (the combined message has its own).
std::string reason(const UsageError& e) {
  const std::string what = e.what(), prefix = "--shapes: ";
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

template <typename Shape>
void add_unique(std::vector<Shape>& out, const std::vector<Shape>& shapes) {
  for (const Shape& s : shapes)
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
}

}  // namespace

PyShapes parse_pybench_shapes(const std::string& spec) {
  PyShapes out;
  for (const std::string& item : split_list(spec, "--shapes")) {
    std::string rmsnorm_why, attention_why;
    try {
      add_unique(out.rmsnorm, parse_rmsnorm_shapes(item));
    } catch (const UsageError& e) {
      rmsnorm_why = reason(e);
    }
    try {
      add_unique(out.attention, parse_attention_shapes(item));
    } catch (const UsageError& e) {
      attention_why = reason(e);
    }
    if (!rmsnorm_why.empty() && !attention_why.empty())
      throw UsageError("--shapes: '" + item + "' is read by neither grammar. RMSNorm: " + rmsnorm_why + ". Attention: " +
                       attention_why);
  }
  return out;
}

std::string pybench_shapes_json(const PyShapes& shapes) {
  auto field = [](const char* key, long long v) { return ", \"" + std::string(key) + "\": " + std::to_string(v); };
  std::string out = "{\"rmsnorm\": [";
  for (std::size_t i = 0; i < shapes.rmsnorm.size(); ++i) {
    const RmsNormShape& s = shapes.rmsnorm[i];
    out += std::string(i ? ", " : "") + "{\"name\": \"" + s.name() + "\"" + field("rows", s.rows) +
           field("hidden", s.hidden) + "}";
  }
  out += "], \"attention\": [";
  for (std::size_t i = 0; i < shapes.attention.size(); ++i) {
    const AttentionShape& s = shapes.attention[i];
    out += std::string(i ? ", " : "") + "{\"name\": \"" + s.name() + "\", \"workload\": \"" + s.workload() + "\"" +
           field("batch", s.batch) + field("heads_q", s.heads_q) + field("heads_kv", s.heads_kv) +
           field("head_dim", s.head_dim) + field("q_len", s.q_len) + field("kv_len", s.kv_len) +
           ", \"causal\": " + (s.causal ? "true" : "false") + "}";
  }
  return out + "]}";
}

}  // namespace sb::bench
