// A variant of an op is one .cu file with `supports` and `launch`, plus one SB_VARIANT line in the op's
// variants.def. The op's registry expands that file with an X-macro into a static array, so the build
// (CMake reads the same file), the benchmarks and the tests all see the same list, in teaching order.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace sb {

template <typename Problem>
struct Variant {
  const char* name;
  const char* summary;
  // "" when the variant can run the (valid) problem, else the reason it cannot.
  std::string (*supports)(const Problem&);
  // Enqueues the kernel(s) on `stream`. Never allocates, synchronizes, prints or reads a clock.
  void (*launch)(const Problem&, cudaStream_t);
};

// The variant called `name` in an op's registry; otherwise std::invalid_argument naming the op and listing
// the known names, so a caller that only passes a name through (the PyTorch ops, the probe) says what to pass.
template <typename V>
const V& find_variant(const std::vector<V>& variants, const std::string& name, const char* op) {
  std::string known;
  for (const V& v : variants) {
    if (name == v.name) return v;
    known += std::string(known.empty() ? "" : ", ") + v.name;
  }
  throw std::invalid_argument(std::string(op) + ": unknown variant '" + name + "' (known: " + known + ")");
}

// The first variant of `order` whose supports(p) is "" (p already validated); std::invalid_argument
// listing every variant's reason when none does. What each op's best_variant() walks.
template <typename V, typename Problem>
const V& first_supporting(const std::vector<const V*>& order, const Problem& p, const char* op) {
  std::string reasons;
  for (const V* v : order) {
    const std::string why = v->supports(p);
    if (why.empty()) return *v;
    reasons += std::string(reasons.empty() ? "" : "; ") + v->name + ": " + why;
  }
  throw std::invalid_argument(std::string(op) + ": no variant supports this problem (" + reasons + ")");
}

// The run() of an op whose variants take a workspace (attention, paged_attention): validate(), supports()
// (unsupported: std::invalid_argument with the reason), the workspace the variant needs against the one
// given, then launch().
template <typename V, typename Problem>
void run_with_workspace(const V& v, const Problem& p, cudaStream_t stream, const char* op) {
  p.validate();
  if (std::string why = v.supports(p); !why.empty())
    throw std::invalid_argument(std::string(op) + "/" + v.name + " does not support this problem: " + why);
  const std::size_t need = v.workspace_bytes(p);
  if (need > p.workspace_size || (need && !p.workspace))
    throw std::invalid_argument(std::string(op) + "/" + v.name + ": workspace of " +
                                std::to_string(p.workspace_size) + " bytes given, " + std::to_string(need) + " needed");
  v.launch(p, stream);
}

}  // namespace sb
