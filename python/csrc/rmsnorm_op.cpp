// solbench::rms_norm: the RMSNorm kernels (kernels/rmsnorm) as a PyTorch operator, over the last dimension
// of x, as torch.nn.functional.rms_norm(x, [hidden], weight, eps). The fake (meta) kernel is the Python
// package's (python/solbench/_fake.py), and so is its autograd formula, which runs solbench::rms_norm_backward
// (rmsnorm_backward_op.cpp; python/solbench/_autograd.py). A fragment, not TORCH_LIBRARY: each op's file
// registers its own schemas, so a build of one op (examples/jit_rmsnorm.py) needs only that op's kernels.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "ops.h"
#include "rmsnorm/rmsnorm.h"

namespace sb::ops {
namespace {

constexpr const char* kOp = "rms_norm";

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps, const std::string& variant) {
  check_cuda(x, kOp, "x");
  const DType dtype = dtype_of(x, kOp, "x");
  check_like(weight, x, kOp, "weight", "x");
  TORCH_CHECK(x.dim() >= 1, "solbench::rms_norm: x must have at least 1 dimension (the hidden one)");
  const int64_t hidden = x.size(-1);
  check_norm_weight(weight, hidden, kOp);
  check_contiguous(x, kOp, "x", "; pass x.contiguous()");  // a strided x is the caller's copy to make

  at::Tensor y = at::empty(x.sizes(), x.options());  // the caching allocator, on x's device
  if (y.numel() == 0) return y;
  const c10::cuda::CUDAGuard device(x.device());
  const rmsnorm::Problem p{x.numel() / hidden, hidden, eps, dtype, x.data_ptr(), weight.data_ptr(), y.data_ptr()};
  translated(kOp, [&] {
    // best_variant() and run() validate p: an invalid problem (eps < 0, say) is refused naming the field.
    const rmsnorm::Variant& v = variant == "auto" ? rmsnorm::best_variant(p) : rmsnorm::variant(variant);
    rmsnorm::run(v, p, at::cuda::getCurrentCUDAStream().stream());
  });
  return y;
}

std::vector<std::string> rmsnorm_variants() { return names(rmsnorm::variants()); }

}  // namespace
}  // namespace sb::ops

TORCH_LIBRARY_FRAGMENT(solbench, m) {
  m.def("rms_norm(Tensor x, Tensor weight, float eps, str variant=\"auto\") -> Tensor");
  // The registry's names in teaching order; no tensors, so it runs on any machine.
  m.def("rmsnorm_variants() -> str[]", &sb::ops::rmsnorm_variants);
}

TORCH_LIBRARY_IMPL(solbench, CUDA, m) { m.impl("rms_norm", &sb::ops::rms_norm); }
// CPU tensors reach the same function, whose first check refuses them by name; without it the dispatcher's
// own error lists every backend instead.
TORCH_LIBRARY_IMPL(solbench, CPU, m) { m.impl("rms_norm", &sb::ops::rms_norm); }
