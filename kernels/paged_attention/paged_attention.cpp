#include "paged_attention/paged_attention.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "common/registry.h"

namespace sb::paged_attention {

#define SB_VARIANT(name, summary)            \
  namespace name {                           \
  std::string supports(const Problem&);      \
  std::size_t workspace_bytes(const Problem&); \
  void launch(const Problem&, cudaStream_t); \
  }
#include "paged_attention/variants.def"
#undef SB_VARIANT

namespace {
const std::vector<Variant> kVariants = {
#define SB_VARIANT(name, summary) {#name, summary, &name::supports, &name::workspace_bytes, &name::launch},
#include "paged_attention/variants.def"
#undef SB_VARIANT
};
}  // namespace

const std::vector<Variant>& variants() { return kVariants; }

const Variant& variant(const std::string& name) { return find_variant(kVariants, name, "paged_attention"); }

const Variant& best_variant(const Problem& p) {
  p.validate();
  std::vector<const Variant*> order;
  for (auto v = kVariants.rbegin(); v != kVariants.rend(); ++v) order.push_back(&*v);
  return first_supporting(order, p, "paged_attention");
}

void run(const Variant& v, const Problem& p, cudaStream_t stream) {
  run_with_workspace(v, p, stream, "paged_attention");
}

double Problem::softmax_scale() const { return scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(head_dim)); }

int64_t Problem::total_keys() const {
  int64_t keys = 0;
  for (int64_t b = 0; b < batch; ++b) keys += seq_lens_host[b];
  return keys;
}

int64_t Problem::max_seq_len() const {
  int64_t longest = 0;
  for (int64_t b = 0; b < batch; ++b) longest = std::max<int64_t>(longest, seq_lens_host[b]);
  return longest;
}

int64_t Problem::unmasked_pairs() const {
  int64_t pairs = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = seq_lens_host[b];
    for (int64_t i = 0; i < q_len; ++i)
      pairs += causal ? std::clamp<int64_t>(i + (len - q_len) + 1, 0, len) : len;
  }
  return pairs;
}

double Problem::flops() const {
  return 4.0 * static_cast<double>(head_dim) * static_cast<double>(heads_q) * static_cast<double>(unmasked_pairs());
}

std::size_t Problem::kv_element_bytes() const { return kv_cache == KvCache::fp8_e4m3 ? 1 : size_bytes(dtype); }

std::size_t Problem::kv_bytes() const {
  return static_cast<std::size_t>(2 * total_keys() * heads_kv * head_dim) * kv_element_bytes();
}

std::size_t Problem::bytes() const {
  return static_cast<std::size_t>(2 * batch * q_len * heads_q * head_dim) * size_bytes(dtype) + kv_bytes();
}

void Problem::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("paged_attention: " + what); };
  const std::pair<const char*, int64_t> sizes[] = {
      {"batch", batch},         {"heads_q", heads_q},     {"heads_kv", heads_kv},  {"head_dim", head_dim},
      {"q_len", q_len},         {"page_size", page_size}, {"num_pages", num_pages}, {"max_pages", max_pages}};
  for (const auto& [name, value] : sizes)
    if (value <= 0) fail(std::string(name) + " must be >= 1, got " + std::to_string(value));
  if (heads_q % heads_kv != 0)
    fail("heads_q (" + std::to_string(heads_q) + ") must be a multiple of heads_kv (" + std::to_string(heads_kv) + ")");
  if (q_len > kMaxQLen)
    fail("q_len must be at most " + std::to_string(kMaxQLen) + " (decode), got " + std::to_string(q_len));
  if (!std::isfinite(scale) || scale < 0)
    fail("scale must be finite and >= 0 (0 = 1/sqrt(head_dim)), got " + std::to_string(scale));
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16)
    fail("dtype: unsupported value " + std::to_string(static_cast<int>(dtype)));
  if (kv_cache != KvCache::dtype && kv_cache != KvCache::fp8_e4m3)
    fail("kv_cache: unsupported value " + std::to_string(static_cast<int>(kv_cache)));
  if (kv_cache == KvCache::fp8_e4m3)
    for (const auto& [name, value] : {std::pair<const char*, float>{"k_scale", k_scale}, {"v_scale", v_scale}})
      if (!std::isfinite(value) || value <= 0)
        fail(std::string(name) + " must be finite and > 0 for an FP8 cache, got " + std::to_string(value));
  const std::pair<const char*, const void*> pointers[] = {
      {"seq_lens_host", seq_lens_host}, {"seq_lens", seq_lens}, {"block_table", block_table}, {"q", q},
      {"k_pages", k_pages},             {"v_pages", v_pages},   {"o", o}};
  for (const auto& [name, pointer] : pointers)
    if (!pointer) fail(std::string(name) + " is null");
  const int64_t capacity = max_pages * page_size;
  for (int64_t b = 0; b < batch; ++b)
    if (seq_lens_host[b] < 1 || seq_lens_host[b] > capacity)
      fail("seq_lens[" + std::to_string(b) + "] must be in [1, max_pages * page_size = " + std::to_string(capacity) +
           "], got " + std::to_string(seq_lens_host[b]));
  if (num_splits < 0) fail("num_splits must be >= 0 (0 = the variant's plan), got " + std::to_string(num_splits));
}

}  // namespace sb::paged_attention
