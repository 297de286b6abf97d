#include "rmsnorm_backward/rmsnorm_backward.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace sb::rmsnorm_backward {

#define SB_VARIANT(name, summary)                       \
  namespace name {                                      \
  std::string supports(const Problem&);                 \
  void launch(const Problem&, cudaStream_t);            \
  }
#include "rmsnorm_backward/variants.def"
#undef SB_VARIANT

namespace {
const std::vector<Variant> kVariants = {
#define SB_VARIANT(name, summary) {#name, summary, &name::supports, &name::launch},
#include "rmsnorm_backward/variants.def"
#undef SB_VARIANT
};
}  // namespace

const std::vector<Variant>& variants() { return kVariants; }

const Variant& variant(const std::string& name) { return find_variant(kVariants, name, "rmsnorm_backward"); }

const Variant& best_variant(const Problem& p) {
  p.validate();
  std::vector<const Variant*> order;
  for (auto v = kVariants.rbegin(); v != kVariants.rend(); ++v) order.push_back(&*v);
  return first_supporting(order, p, "rmsnorm_backward");
}

std::size_t workspace_bytes(const Problem& p) {
  if (p.rows <= 0 || p.hidden <= 0) return 0;
  return static_cast<std::size_t>(std::min(p.rows, kMaxPartialRows)) * static_cast<std::size_t>(p.hidden) *
         sizeof(float);
}

void Problem::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("rmsnorm_backward: " + what); };
  if (rows <= 0) fail("rows must be >= 1, got " + std::to_string(rows));
  if (hidden <= 0) fail("hidden must be >= 1, got " + std::to_string(hidden));
  if (hidden > (int64_t{1} << 30)) fail("hidden must be <= 2^30, got " + std::to_string(hidden));
  if (!std::isfinite(eps) || eps < 0) fail("eps must be finite and >= 0, got " + std::to_string(eps));
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16)
    fail("dtype: unsupported value " + std::to_string(static_cast<int>(dtype)));
  if (!x) fail("x is null");
  if (!w) fail("w is null");
  if (!dy) fail("dy is null");
  if (!dx) fail("dx is null");
  if (!dw) fail("dw is null");
  if (!workspace) fail("workspace is null (workspace_bytes() gives its size)");
  if (reinterpret_cast<std::uintptr_t>(workspace) % 16 != 0) fail("workspace must be 16-byte aligned");
  if (workspace_size < workspace_bytes(*this))
    fail("workspace_size " + std::to_string(workspace_size) + " < workspace_bytes() " +
         std::to_string(workspace_bytes(*this)));
}

void run(const Variant& v, const Problem& p, cudaStream_t stream) {
  p.validate();
  if (std::string why = v.supports(p); !why.empty())
    throw std::invalid_argument(std::string("rmsnorm_backward/") + v.name + " does not support this problem: " + why);
  v.launch(p, stream);
}

int64_t two_kernel_chunk_rows(int64_t rows) {
  const int64_t need = (rows + kMaxPartialRows - 1) / kMaxPartialRows;
  return std::max<int64_t>(32, (need + 31) / 32 * 32);
}

PersistentConfig persistent_config(int64_t hidden, DType dtype) {
  constexpr int kMaxThreads = 512;
  const int vec16 = 16 / static_cast<int>(size_bytes(dtype));
  PersistentConfig c{};
  c.vec = hidden % vec16 == 0 ? vec16 : 1;
  const int64_t vectors = hidden / c.vec;
  // A thread keeps its x, dy and fp32 dw partial in registers, within the 128 registers a thread of a
  // 512-thread block has: 32 elements for 16-bit 16-byte accesses (x and dy packed two to a register), 16
  // for fp32 ones, 8 scalar ones (each access its own address registers: 16 spill). The fewest accesses a
  // thread that hold the row (the most threads, up to 512).
  const int max_elements = c.vec == 8 ? 32 : c.vec == 4 ? 16 : 8;
  for (int v = 1; v * c.vec <= max_elements; v *= 2) {
    if (vectors <= int64_t{kMaxThreads} * v) {
      c.vectors_per_thread = v;
      const int64_t threads = (vectors + v - 1) / v;
      c.block_threads = static_cast<int>((threads + 31) / 32 * 32);
      return c;
    }
  }
  c.vectors_per_thread = 0;
  c.block_threads = 0;
  return c;
}

}  // namespace sb::rmsnorm_backward
