// solbench::paged_attention: decode over a paged KV cache (kernels/paged_attention) as a PyTorch operator.
//   q            [batch, heads_q, q_len, head_dim], SDPA's layout as solbench::attention (q_len <= 8)
//   k_cache,     [num_pages, page_size, heads_kv, head_dim], contiguous: vLLM's paged cache, in q's dtype or
//   v_cache      in torch.float8_e4m3fn (vLLM's kv_cache_dtype="fp8"), whose values times k_scale and v_scale
//                are the cache's (per-tensor scales; 1 for a cache in q's dtype)
//   block_table  [batch, max_pages] int32 on the device: token t of sequence b is row t % page_size of page
//                block_table[b][t / page_size]
//   seq_lens     [batch] int32 on the device: each sequence's KV length
//   seq_lens_cpu the same lengths in a CPU int32 tensor, for the plan (how the batch's work is split over the
//                SMs), which runs on the host. Without it the op copies seq_lens to the host, which waits for
//                the stream (and so cannot be captured in a CUDA graph); a serving loop that knows its lengths
//                on the host passes them.
// The output is q's shape, BSHD memory seen through a transpose, as solbench::attention's. The block table's
// entries and the two copies of the lengths are the caller's to keep consistent: checking them would read the
// device. Each length must lie in [1, max_pages * page_size], which the op checks on the host copy.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ops.h"
#include "paged_attention/paged_attention.h"

namespace sb::ops {
namespace {

constexpr const char* kOp = "paged_attention";

void check_int32_vector(const at::Tensor& t, const char* arg, int64_t dims) {
  TORCH_CHECK(t.scalar_type() == at::kInt, "solbench::paged_attention: ", arg, " must be int32, got ",
              t.scalar_type());
  TORCH_CHECK(t.dim() == dims, "solbench::paged_attention: ", arg, " must be ", dims, "-D, got shape ", t.sizes());
  check_contiguous(t, kOp, arg, "");
}

void check_shapes(const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache,
                  const at::Tensor& block_table, const at::Tensor& seq_lens) {
  TORCH_CHECK(q.dim() == 4, "solbench::paged_attention: q must be 4-D [batch, heads_q, q_len, head_dim], got ",
              q.sizes());
  TORCH_CHECK(k_cache.dim() == 4 && k_cache.sizes() == v_cache.sizes(),
              "solbench::paged_attention: k_cache and v_cache must be 4-D [num_pages, page_size, heads_kv, head_dim] "
              "of one shape; got k_cache ", k_cache.sizes(), ", v_cache ", v_cache.sizes());
  check_contiguous(k_cache, kOp, "k_cache", "");
  check_contiguous(v_cache, kOp, "v_cache", "");
  TORCH_CHECK(k_cache.size(3) == q.size(3), "solbench::paged_attention: the caches have head_dim ", k_cache.size(3),
              " but q has ", q.size(3));
  TORCH_CHECK(k_cache.size(2) >= 1 && q.size(1) % k_cache.size(2) == 0, "solbench::paged_attention: q's ", q.size(1),
              " heads must be a multiple of the caches' ", k_cache.size(2), " (grouped-query attention)");
  check_int32_vector(block_table, "block_table", 2);
  check_int32_vector(seq_lens, "seq_lens", 1);
  TORCH_CHECK(block_table.size(0) == q.size(0) && seq_lens.size(0) == q.size(0),
              "solbench::paged_attention: q has batch ", q.size(0), " but block_table has ", block_table.size(0),
              " rows and seq_lens ", seq_lens.size(0), " entries");
}

at::Tensor paged_attention(const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache,
                           const at::Tensor& block_table, const at::Tensor& seq_lens,
                           const std::optional<at::Tensor>& seq_lens_cpu, bool causal, std::optional<double> scale,
                           double k_scale, double v_scale, const std::string& variant) {
  check_cuda(q, kOp, "q");
  const DType dtype = dtype_of(q, kOp, "q");
  const bool fp8 = k_cache.scalar_type() == at::kFloat8_e4m3fn;
  if (fp8) {  // an FP8 cache: both caches e4m3 on q's device; q's dtype is checked by the kernel's supports()
    for (const auto& [t, arg] : {std::pair<const at::Tensor&, const char*>{k_cache, "k_cache"}, {v_cache, "v_cache"}}) {
      check_cuda(t, kOp, arg);
      TORCH_CHECK(t.device() == q.device(), "solbench::paged_attention: ", arg, " is on ", t.device(), " but q is on ",
                  q.device());
      TORCH_CHECK(t.scalar_type() == at::kFloat8_e4m3fn, "solbench::paged_attention: k_cache is float8_e4m3fn but ",
                  arg, " is ", t.scalar_type(), "; an FP8 cache holds both K and V in e4m3");
    }
  } else {
    check_like(k_cache, q, kOp, "k_cache", "q");
    check_like(v_cache, q, kOp, "v_cache", "q");
    TORCH_CHECK(k_scale == 1.0 && v_scale == 1.0, "solbench::paged_attention: k_scale and v_scale scale an FP8 "
                "cache (float8_e4m3fn); a cache in q's dtype takes 1, got ", k_scale, " and ", v_scale);
  }
  check_cuda(block_table, kOp, "block_table");
  check_cuda(seq_lens, kOp, "seq_lens");
  TORCH_CHECK(block_table.device() == q.device() && seq_lens.device() == q.device(),
              "solbench::paged_attention: block_table and seq_lens must be on q's device ", q.device());
  check_shapes(q, k_cache, v_cache, block_table, seq_lens);
  TORCH_CHECK(!scale || (std::isfinite(*scale) && *scale > 0),
              "solbench::paged_attention: scale must be finite and > 0 (None: 1/sqrt(head_dim)), got ",
              scale.value_or(0));
  at::Tensor lens_host;
  if (seq_lens_cpu) {
    TORCH_CHECK(seq_lens_cpu->device().is_cpu(), "solbench::paged_attention: seq_lens_cpu is on ",
                seq_lens_cpu->device(), "; it is the host copy of seq_lens");
    check_int32_vector(*seq_lens_cpu, "seq_lens_cpu", 1);
    TORCH_CHECK(seq_lens_cpu->size(0) == q.size(0), "solbench::paged_attention: seq_lens_cpu has ",
                seq_lens_cpu->size(0), " entries but q has batch ", q.size(0));
    lens_host = *seq_lens_cpu;
  } else {
    lens_host = seq_lens.to(at::kCPU);  // waits for the stream
  }

  const int64_t batch = q.size(0), heads_q = q.size(1), q_len = q.size(2), head_dim = q.size(3);
  at::Tensor o = at::empty({batch, q_len, heads_q, head_dim}, q.options());  // BSHD
  if (o.numel() == 0) return o.transpose(1, 2);

  const c10::cuda::CUDAGuard device(q.device());
  const at::Tensor qb = q.transpose(1, 2).contiguous();
  paged_attention::Problem p;
  p.batch = batch;
  p.heads_q = heads_q;
  p.heads_kv = k_cache.size(2);
  p.head_dim = head_dim;
  p.q_len = q_len;
  p.page_size = k_cache.size(1);
  p.num_pages = k_cache.size(0);
  p.max_pages = block_table.size(1);
  p.causal = causal;
  p.scale = scale.value_or(0.0);
  p.dtype = dtype;
  if (fp8) {
    p.kv_cache = paged_attention::KvCache::fp8_e4m3;
    p.k_scale = static_cast<float>(k_scale);
    p.v_scale = static_cast<float>(v_scale);
  }
  p.seq_lens_host = lens_host.data_ptr<int32_t>();
  p.seq_lens = seq_lens.data_ptr<int32_t>();
  p.block_table = block_table.data_ptr<int32_t>();
  p.q = qb.data_ptr();
  p.k_pages = k_cache.data_ptr();
  p.v_pages = v_cache.data_ptr();
  p.o = o.data_ptr();
  translated(kOp, [&] {
    run_chosen(kOp, p, variant, q.options(), &paged_attention::best_variant, &paged_attention::variant,
               &paged_attention::run);
  });
  return o.transpose(1, 2);
}

std::vector<std::string> paged_attention_variants() { return names(paged_attention::variants()); }

}  // namespace
}  // namespace sb::ops

TORCH_LIBRARY_FRAGMENT(solbench, m) {
  m.def("paged_attention(Tensor q, Tensor k_cache, Tensor v_cache, Tensor block_table, Tensor seq_lens, "
        "Tensor? seq_lens_cpu=None, bool causal=True, float? scale=None, float k_scale=1.0, float v_scale=1.0, "
        "str variant=\"auto\") -> Tensor");
  m.def("paged_attention_variants() -> str[]", &sb::ops::paged_attention_variants);
}

TORCH_LIBRARY_IMPL(solbench, CUDA, m) { m.impl("paged_attention", &sb::ops::paged_attention); }
// CPU tensors reach the same function, whose first check refuses them by name (rmsnorm_op.cpp says why).
TORCH_LIBRARY_IMPL(solbench, CPU, m) { m.impl("paged_attention", &sb::ops::paged_attention); }
