// Helpers shared by the attention GPU tests: the registry's variant names, the test-name suffix of a
// (variant, dtype, shape) case, and refusals of unsupported problems.
#pragma once

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "attention_case.h"
#include "expect.h"

namespace sb::test {

inline std::vector<std::string> attention_variant_names() {
  std::vector<std::string> n;
  for (const auto& v : attention::variants()) n.push_back(v.name);
  return n;
}

// "<variant>_<dtype>_<shape>": a gtest parameter name.
inline std::string attention_case_name(const std::string& variant, DType dtype, const bench::AttentionDims& dims) {
  return variant + "_" + std::string(name(dtype)) + "_" + bench::shape_name(dims);
}

// attention::run refuses each problem with std::invalid_argument whose message contains its reason.
struct Refusal {
  bench::AttentionDims dims;
  DType dtype;
  const char* reason;  // a fragment the message must contain
};

inline void expect_refusals(const attention::Variant& v, std::initializer_list<Refusal> cases) {
  bench::Stream stream;
  for (const Refusal& r : cases) {
    bench::AttentionData data(r.dims, r.dtype, 1, stream.get());
    const attention::Problem p = data.problem();
    expect_throw_naming<std::invalid_argument>([&] { attention::run(v, p, stream.get()); }, r.reason);
  }
}

}  // namespace sb::test
