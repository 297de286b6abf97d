// solbench::rms_norm_backward: the RMSNorm backward kernels (kernels/rmsnorm_backward) as a PyTorch operator,
// the gradients of y = rms_norm(x, [hidden], weight, eps) over the last dimension: dx and dw from dy, x and
// weight. rstd is recomputed from x (the forward op saves none). dw is reduced in a fixed order, so the same
// inputs give the same bits on every call. The Python package registers this op as solbench::rms_norm's
// backward (python/solbench/_autograd.py) and its fake kernel (python/solbench/_fake.py).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstddef>
#include <string>
#include <tuple>
#include <vector>

#include "ops.h"
#include "rmsnorm_backward/rmsnorm_backward.h"

namespace sb::ops {
namespace {

constexpr const char* kOp = "rms_norm_backward";

std::tuple<at::Tensor, at::Tensor> rms_norm_backward(const at::Tensor& dy, const at::Tensor& x,
                                                     const at::Tensor& weight, double eps, const std::string& variant) {
  check_cuda(x, kOp, "x");
  const DType dtype = dtype_of(x, kOp, "x");
  check_like(dy, x, kOp, "dy", "x");
  check_like(weight, x, kOp, "weight", "x");
  TORCH_CHECK(x.dim() >= 1, "solbench::rms_norm_backward: x must have at least 1 dimension (the hidden one)");
  TORCH_CHECK(dy.sizes() == x.sizes(), "solbench::rms_norm_backward: dy has shape ", dy.sizes(), " but x has ",
              x.sizes(), " (dy is the gradient of the forward's output, which has x's shape)");
  const int64_t hidden = x.size(-1);
  check_norm_weight(weight, hidden, kOp);
  check_contiguous(dy, kOp, "dy", "; pass dy.contiguous()");  // strided inputs are the caller's copies to make
  check_contiguous(x, kOp, "x", "; pass x.contiguous()");

  at::Tensor dx = at::empty(x.sizes(), x.options());  // the caching allocator, on x's device
  if (x.numel() == 0) return {dx, at::zeros({hidden}, x.options())};  // dw: a sum over no rows
  at::Tensor dw = at::empty({hidden}, x.options());

  const c10::cuda::CUDAGuard device(x.device());
  rmsnorm_backward::Problem p;
  p.rows = x.numel() / hidden;
  p.hidden = hidden;
  p.eps = eps;
  p.dtype = dtype;
  p.x = x.data_ptr();
  p.w = weight.data_ptr();
  p.dy = dy.data_ptr();
  p.rstd = nullptr;  // recomputed from x
  p.dx = dx.data_ptr();
  p.dw = dw.data_ptr();
  // The dw partials, from the caching allocator (its blocks are 512-byte aligned, past the 16 bytes the
  // kernels need), freed into the cache on return: later work on this stream runs after the kernels. Every
  // variant runs in workspace_bytes(), so the buffer is allocated before the variant is chosen.
  const std::size_t bytes = rmsnorm_backward::workspace_bytes(p);
  const at::Tensor workspace = at::empty({static_cast<int64_t>(bytes)}, x.options().dtype(at::kByte));
  p.workspace = workspace.data_ptr();
  p.workspace_size = bytes;
  translated(kOp, [&] {
    // best_variant() and run() validate p: an invalid problem (eps < 0, say) is refused naming the field.
    const rmsnorm_backward::Variant& v =
        variant == "auto" ? rmsnorm_backward::best_variant(p) : rmsnorm_backward::variant(variant);
    rmsnorm_backward::run(v, p, at::cuda::getCurrentCUDAStream().stream());
  });
  return {dx, dw};
}

std::vector<std::string> rmsnorm_backward_variants() { return names(rmsnorm_backward::variants()); }

}  // namespace
}  // namespace sb::ops

TORCH_LIBRARY_FRAGMENT(solbench, m) {
  m.def("rms_norm_backward(Tensor dy, Tensor x, Tensor weight, float eps, str variant=\"auto\") -> "
        "(Tensor dx, Tensor dw)");
  m.def("rmsnorm_backward_variants() -> str[]", &sb::ops::rmsnorm_backward_variants);
}

TORCH_LIBRARY_IMPL(solbench, CUDA, m) { m.impl("rms_norm_backward", &sb::ops::rms_norm_backward); }
// CPU tensors reach the same function, whose first check refuses them by name (rmsnorm_op.cpp says why).
TORCH_LIBRARY_IMPL(solbench, CPU, m) { m.impl("rms_norm_backward", &sb::ops::rms_norm_backward); }
