#include "rmsnorm/rmsnorm.h"

#include <cmath>
#include <stdexcept>

namespace sb::rmsnorm {

#define SB_VARIANT(name, summary)                       \
  namespace name {                                      \
  std::string supports(const Problem&);                 \
  void launch(const Problem&, cudaStream_t);            \
  }
#include "rmsnorm/variants.def"
#undef SB_VARIANT

namespace {
const std::vector<Variant> kVariants = {
#define SB_VARIANT(name, summary) {#name, summary, &name::supports, &name::launch},
#include "rmsnorm/variants.def"
#undef SB_VARIANT
};
}  // namespace

const std::vector<Variant>& variants() { return kVariants; }

const Variant& variant(const std::string& name) { return find_variant(kVariants, name, "rmsnorm"); }

const Variant& best_variant(const Problem& p) {
  p.validate();
  std::vector<const Variant*> order;
  for (auto v = kVariants.rbegin(); v != kVariants.rend(); ++v) order.push_back(&*v);
  return first_supporting(order, p, "rmsnorm");
}

void Problem::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("rmsnorm: " + what); };
  if (rows <= 0) fail("rows must be >= 1, got " + std::to_string(rows));
  if (hidden <= 0) fail("hidden must be >= 1, got " + std::to_string(hidden));
  if (hidden > (int64_t{1} << 30)) fail("hidden must be <= 2^30, got " + std::to_string(hidden));
  if (!std::isfinite(eps) || eps < 0) fail("eps must be finite and >= 0, got " + std::to_string(eps));
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16)
    fail("dtype: unsupported value " + std::to_string(static_cast<int>(dtype)));
  if (!x) fail("x is null");
  if (!w) fail("w is null");
  if (!y) fail("y is null");
}

void run(const Variant& v, const Problem& p, cudaStream_t stream) {
  p.validate();
  if (std::string why = v.supports(p); !why.empty())
    throw std::invalid_argument(std::string("rmsnorm/") + v.name + " does not support this problem: " + why);
  v.launch(p, stream);
}

}  // namespace sb::rmsnorm
