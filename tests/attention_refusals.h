// GPU-test helper: an attention variant refusing problems it does not support, through attention::run,
// with std::invalid_argument naming the reason.
#pragma once

#include <initializer_list>
#include <stdexcept>

#include "attention/attention.h"
#include "attention_case.h"
#include "expect.h"

namespace sb::test {

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
