#include "attention/attention.h"

#include <cmath>
#include <stdexcept>

#include "common/registry.h"

namespace sb::attention {

#define SB_VARIANT(name, traits, summary)            \
  namespace name {                                   \
  std::string supports(const Problem&);              \
  std::size_t workspace_bytes(const Problem&);       \
  void launch(const Problem&, cudaStream_t);         \
  }
#include "attention/variants.def"
#undef SB_VARIANT

namespace {
const std::vector<Variant> kVariants = {
#define SB_VARIANT(name, traits, summary) \
  {#name, summary, traits, &name::supports, &name::workspace_bytes, &name::launch},
#include "attention/variants.def"
#undef SB_VARIANT
};
}  // namespace

const std::vector<Variant>& variants() { return kVariants; }

const Variant& variant(const std::string& name) { return find_variant(kVariants, name, "attention"); }

const Variant& best_variant(const Problem& p) {
  p.validate();
  const unsigned made_for = p.decode() ? kForDecode : kForPrefill;
  std::vector<const Variant*> order;
  for (const bool own_workload : {true, false})
    for (auto v = kVariants.rbegin(); v != kVariants.rend(); ++v)
      if (((v->traits & made_for) != 0) == own_workload) order.push_back(&*v);
  return first_supporting(order, p, "attention");
}

double Problem::softmax_scale() const { return scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(head_dim)); }

int64_t Problem::unmasked_pairs() const {
  if (!causal) return q_len * kv_len;
  // Row i sees keys 0 .. i + (kv_len - q_len), clipped to [0, kv_len].
  const int64_t offset = kv_len - q_len;
  int64_t pairs = 0;
  for (int64_t i = 0; i < q_len; ++i) {
    const int64_t seen = i + offset + 1;
    pairs += seen <= 0 ? 0 : (seen >= kv_len ? kv_len : seen);
  }
  return pairs;
}

double Problem::flops() const {
  return 4.0 * static_cast<double>(head_dim) * static_cast<double>(batch) * static_cast<double>(heads_q) *
         static_cast<double>(unmasked_pairs());
}

std::size_t Problem::kv_bytes() const {
  return static_cast<std::size_t>(2 * batch * kv_len * heads_kv * head_dim) * size_bytes(dtype);
}

std::size_t Problem::bytes() const {
  return static_cast<std::size_t>(2 * batch * q_len * heads_q * head_dim) * size_bytes(dtype) + kv_bytes();
}

void Problem::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("attention: " + what); };
  const std::pair<const char*, int64_t> sizes[] = {{"batch", batch},       {"heads_q", heads_q}, {"heads_kv", heads_kv},
                                                   {"head_dim", head_dim}, {"q_len", q_len},     {"kv_len", kv_len}};
  for (const auto& [name, value] : sizes)
    if (value <= 0) fail(std::string(name) + " must be >= 1, got " + std::to_string(value));
  if (heads_q % heads_kv != 0)
    fail("heads_q (" + std::to_string(heads_q) + ") must be a multiple of heads_kv (" + std::to_string(heads_kv) + ")");
  if (!std::isfinite(scale) || scale < 0) fail("scale must be finite and >= 0 (0 = 1/sqrt(head_dim)), got " + std::to_string(scale));
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16)
    fail("dtype: unsupported value " + std::to_string(static_cast<int>(dtype)));
  if (!q) fail("q is null");
  if (!k) fail("k is null");
  if (!v) fail("v is null");
  if (!o) fail("o is null");
  if (num_splits < 0) fail("num_splits must be >= 0 (0 = the variant's heuristic), got " + std::to_string(num_splits));
}

void run(const Variant& v, const Problem& p, cudaStream_t stream) {
  run_with_workspace(v, p, stream, "attention");
}

}  // namespace sb::attention
