// solbench::attention: the attention kernels (kernels/attention) as a PyTorch operator in the layout of
// torch.nn.functional.scaled_dot_product_attention: q [batch, heads_q, q_len, head_dim], k and v
// [batch, heads_kv, kv_len, head_dim], grouped-query attention when heads_kv divides heads_q, causal masking
// bottom-right aligned when q_len != kv_len (SDPA's is_causal is top-left), decode or prefill by shape.
//
// The kernels take BSHD memory. q, k and v are copied into it (q.transpose(1, 2).contiguous()): no copy for
// tensors that are already BSHD memory seen through a transpose, as a Llama-style block's projections
// are, one copy each otherwise (a later change may pass strides to the kernels instead). The output is
// BSHD memory returned as its [batch, heads_q, q_len, head_dim] transpose, with no copy: the strides
// SDPA's flash and cuDNN backends return too. The fake kernel (python/solbench/_fake.py) gives the same.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "ops.h"

namespace sb::ops {
namespace {

constexpr const char* kOp = "attention";

// The shape checks that name SDPA's dimensions; Problem::validate() repeats the ones it shares in the
// kernels' own terms.
void check_shapes(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
              "solbench::attention: q, k and v must be 4-D [batch, heads, seq, head_dim] as for "
              "scaled_dot_product_attention; got q ", q.sizes(), ", k ", k.sizes(), ", v ", v.sizes());
  TORCH_CHECK(k.sizes() == v.sizes(), "solbench::attention: k and v must have one shape; got k ", k.sizes(), ", v ",
              v.sizes());
  TORCH_CHECK(k.size(0) == q.size(0), "solbench::attention: k and v have batch ", k.size(0), " but q has ", q.size(0));
  TORCH_CHECK(k.size(3) == q.size(3), "solbench::attention: k and v have head_dim ", k.size(3), " but q has ",
              q.size(3), " (the kernels take one head_dim for q, k and v)");
  TORCH_CHECK(k.size(1) >= 1 && q.size(1) % k.size(1) == 0, "solbench::attention: q's ", q.size(1),
              " heads must be a multiple of k and v's ", k.size(1), " (grouped-query attention)");
}

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal,
                     std::optional<double> scale, const std::string& variant) {
  check_cuda(q, kOp, "q");
  const DType dtype = dtype_of(q, kOp, "q");
  check_like(k, q, kOp, "k", "q");
  check_like(v, q, kOp, "v", "q");
  check_shapes(q, k, v);
  // The kernels read scale 0 as "the default"; an explicit scale must be one they take as given.
  TORCH_CHECK(!scale || (std::isfinite(*scale) && *scale > 0),
              "solbench::attention: scale must be finite and > 0 (None: 1/sqrt(head_dim)), got ", scale.value_or(0));

  const int64_t batch = q.size(0), heads_q = q.size(1), q_len = q.size(2), head_dim = q.size(3);
  at::Tensor o = at::empty({batch, q_len, heads_q, head_dim}, q.options());  // BSHD, the caching allocator
  if (o.numel() == 0) return o.transpose(1, 2);

  const c10::cuda::CUDAGuard device(q.device());
  const at::Tensor qb = q.transpose(1, 2).contiguous();
  const at::Tensor kb = k.transpose(1, 2).contiguous();
  const at::Tensor vb = v.transpose(1, 2).contiguous();
  attention::Problem p;
  p.batch = batch;
  p.heads_q = heads_q;
  p.heads_kv = k.size(1);
  p.head_dim = head_dim;
  p.q_len = q_len;
  p.kv_len = k.size(2);
  p.causal = causal;
  p.scale = scale.value_or(0.0);
  p.dtype = dtype;
  p.q = qb.data_ptr();
  p.k = kb.data_ptr();
  p.v = vb.data_ptr();
  p.o = o.data_ptr();
  // PyTorch's handle of this device and thread, bound to the current stream. Its math mode follows
  // torch.backends.cuda.matmul.allow_tf32, which the manual variant's fp32 products then honour.
  p.cublas = at::cuda::getCurrentCUDABlasHandle();
  translated(kOp, [&] {
    run_chosen(kOp, p, variant, q.options(), &attention::best_variant, &attention::variant, &attention::run);
  });
  return o.transpose(1, 2);
}

std::vector<std::string> attention_variants() { return names(attention::variants()); }

}  // namespace
}  // namespace sb::ops

TORCH_LIBRARY_FRAGMENT(solbench, m) {
  m.def("attention(Tensor q, Tensor k, Tensor v, bool causal, float? scale=None, str variant=\"auto\") -> Tensor");
  m.def("attention_variants() -> str[]", &sb::ops::attention_variants);
}

TORCH_LIBRARY_IMPL(solbench, CUDA, m) { m.impl("attention", &sb::ops::attention); }
// CPU tensors reach the same function, whose first check refuses them by name (rmsnorm_op.cpp says why).
TORCH_LIBRARY_IMPL(solbench, CPU, m) { m.impl("attention", &sb::ops::attention); }
