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
    std::string rmsnorm_why, attention_why, paged_why, layer_why;
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
    try {
      add_unique(out.paged, parse_paged_shapes(item));
    } catch (const UsageError& e) {
      paged_why = reason(e);
    }
    try {  // default: the layers compiled by default (layer_shapes.h's "compiled"), not bench_e2e's 12
      add_unique(out.layer, parse_layer_shapes(item == "default" ? "compiled" : item));
    } catch (const UsageError& e) {
      layer_why = reason(e);
    }
    if (!rmsnorm_why.empty() && !attention_why.empty() && !paged_why.empty() && !layer_why.empty())
      throw UsageError("--shapes: '" + item + "' is read by no grammar. RMSNorm: " + rmsnorm_why + ". Attention: " +
                       attention_why + ". Paged attention: " + paged_why + ". Layer: " + layer_why);
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
  auto attention_fields = [&field](const AttentionShape& s) {
    return ", \"workload\": \"" + s.workload() + "\"" + field("batch", s.batch) + field("heads_q", s.heads_q) +
           field("heads_kv", s.heads_kv) + field("head_dim", s.head_dim) + field("q_len", s.q_len) +
           field("kv_len", s.kv_len) + ", \"causal\": " + (s.causal ? "true" : "false");
  };
  out += "], \"attention\": [";
  for (std::size_t i = 0; i < shapes.attention.size(); ++i)
    out += std::string(i ? ", " : "") + "{\"name\": \"" + shapes.attention[i].name() + "\"" +
           attention_fields(shapes.attention[i]) + "}";
  out += "], \"paged\": [";
  for (std::size_t i = 0; i < shapes.paged.size(); ++i) {
    const PagedShape& s = shapes.paged[i];
    out += std::string(i ? ", " : "") + "{\"name\": \"" + s.name() + "\"" + attention_fields(s.dims) +
           field("page_size", s.page_size) + ", \"lengths\": [";
    const std::vector<int64_t> lens = s.lengths();
    for (std::size_t j = 0; j < lens.size(); ++j) out += (j ? ", " : "") + std::to_string(lens[j]);
    out += "]}";
  }
  out += "], \"layer\": [";
  for (std::size_t i = 0; i < shapes.layer.size(); ++i) {
    const LayerShape& s = shapes.layer[i];
    out += std::string(i ? ", " : "") + "{\"name\": \"" + s.name() + "\", \"workload\": \"" + s.workload() + "\"" +
           field("hidden", s.hidden) + field("heads_q", s.heads_q) + field("heads_kv", s.heads_kv) +
           field("head_dim", s.head_dim) + field("ffn", s.ffn) + field("batch", s.batch) + field("q_len", s.q_len) +
           field("kv_len", s.kv_len) + "}";
  }
  return out + "]}";
}

}  // namespace sb::bench
