// solbench::fused_add_rms_norm: the fused residual-add + RMSNorm kernels (kernels/fused_add_rmsnorm) as a
// PyTorch operator with vLLM's convention, in place over the last dimension:
//   residual = x + residual (rounded to the dtype), then x = rms_norm(residual) * weight.
// It returns nothing; x and residual hold the results. The fake kernel is the Python package's
// (python/solbench/_fake.py).
//
// Beside the CUDA kernel this file registers two more, as torch.library.custom_op does for an op that
// mutates its inputs: ADInplaceOrView bumps the version counters of x and residual, so autograd refuses a
// backward that needs their old values instead of reading the overwritten ones; and Autograd refuses to run
// when grad mode is on and an input requires grad, since the op has no backward (custom_op's default would
// run it and leave x's gradient silently wrong).
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/core/GradMode.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "common/validate.h"
#include "fused_add_rmsnorm/fused_add_rmsnorm.h"
#include "ops.h"

namespace sb::ops {
namespace {

constexpr const char* kOp = "fused_add_rms_norm";
using Signature = void(at::Tensor&, at::Tensor&, const at::Tensor&, double, const std::string&);

// Whether two contiguous tensors share a byte of memory (a and b the same tensor included).
bool share_memory(const at::Tensor& a, const at::Tensor& b) {
  return overlaps(a.data_ptr(), a.nbytes(), b.data_ptr(), b.nbytes());
}

void fused_add_rms_norm(at::Tensor& x, at::Tensor& residual, const at::Tensor& weight, double eps,
                        const std::string& variant) {
  check_cuda(x, kOp, "x");
  const DType dtype = dtype_of(x, kOp, "x");
  check_like(residual, x, kOp, "residual", "x");
  check_like(weight, x, kOp, "weight", "x");
  TORCH_CHECK(x.dim() >= 1, "solbench::fused_add_rms_norm: x must have at least 1 dimension (the hidden one)");
  TORCH_CHECK(residual.sizes() == x.sizes(), "solbench::fused_add_rms_norm: residual has shape ", residual.sizes(),
              " but x has ", x.sizes(), " (they must have one shape)");
  const int64_t hidden = x.size(-1);
  check_norm_weight(weight, hidden, kOp);
  // The kernels read and write rows of `hidden` contiguous elements in place: a strided x or residual cannot be
  // replaced by a contiguous copy without losing the in-place result, so it is refused, not copied.
  check_contiguous(x, kOp, "x", "");
  check_contiguous(residual, kOp, "residual", "");
  if (x.numel() == 0) return;
  // Each element of x and residual is read, then overwritten, by one thread, and every row reads all of
  // weight: shared memory would let one output clobber another's input.
  TORCH_CHECK(!share_memory(x, residual), "solbench::fused_add_rms_norm: x and residual share memory (alias or "
              "overlap); both are written in place and must be distinct buffers");
  TORCH_CHECK(!share_memory(weight, x), "solbench::fused_add_rms_norm: weight shares memory with x, which is "
              "written in place");
  TORCH_CHECK(!share_memory(weight, residual), "solbench::fused_add_rms_norm: weight shares memory with residual, "
              "which is written in place");

  const c10::cuda::CUDAGuard device(x.device());
  const fused_add_rmsnorm::Problem p{x.numel() / hidden, hidden, eps, dtype, x.data_ptr(), residual.data_ptr(),
                                     weight.data_ptr()};
  translated(kOp, [&] {
    // best_variant() and run() validate p: an invalid problem (eps < 0, say) is refused naming the field.
    const fused_add_rmsnorm::Variant& v =
        variant == "auto" ? fused_add_rmsnorm::best_variant(p) : fused_add_rmsnorm::variant(variant);
    fused_add_rmsnorm::run(v, p, at::cuda::getCurrentCUDAStream().stream());
  });
}

const c10::TypedOperatorHandle<Signature>& handle() {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("solbench::fused_add_rms_norm", "").typed<Signature>();
  return op;
}

// The Autograd kernel: refuses inputs that require grad while grad mode is on (no backward exists), else runs
// the op below autograd, as a non-differentiable op's Autograd kernel does.
void fused_add_rms_norm_autograd(c10::DispatchKeySet keys, at::Tensor& x, at::Tensor& residual,
                                 const at::Tensor& weight, double eps, const std::string& variant) {
  if (c10::GradMode::is_enabled()) {
    const char* needs = x.requires_grad() ? "x" : residual.requires_grad() ? "residual"
                                                 : weight.requires_grad()   ? "weight"
                                                                            : nullptr;
    TORCH_CHECK(needs == nullptr, "solbench::fused_add_rms_norm: ", needs, " requires grad, but the op writes x "
                "and residual in place and has no backward; call it under torch.no_grad() or "
                "torch.inference_mode(), or, to train, use solbench.rms_norm(x + residual, weight)");
  }
  const at::AutoDispatchBelowAutograd below;
  handle().redispatch(keys & c10::after_autograd_keyset, x, residual, weight, eps, variant);
}

// The ADInplaceOrView kernel: runs the op, then bumps the version counters of the tensors it wrote, as
// PyTorch's own in-place ops do.
void fused_add_rms_norm_inplace(c10::DispatchKeySet keys, at::Tensor& x, at::Tensor& residual,
                                const at::Tensor& weight, double eps, const std::string& variant) {
  {
    const at::AutoDispatchBelowADInplaceOrView below;
    handle().redispatch(keys & c10::after_ADInplaceOrView_keyset, x, residual, weight, eps, variant);
  }
  torch::autograd::impl::bump_version(x);
  torch::autograd::impl::bump_version(residual);
}

std::vector<std::string> fused_add_rmsnorm_variants() { return names(fused_add_rmsnorm::variants()); }

}  // namespace
}  // namespace sb::ops

TORCH_LIBRARY_FRAGMENT(solbench, m) {
  m.def("fused_add_rms_norm(Tensor(a!) x, Tensor(b!) residual, Tensor weight, float eps, str variant=\"auto\") -> ()");
  m.def("fused_add_rmsnorm_variants() -> str[]", &sb::ops::fused_add_rmsnorm_variants);
}

TORCH_LIBRARY_IMPL(solbench, CUDA, m) { m.impl("fused_add_rms_norm", &sb::ops::fused_add_rms_norm); }
// CPU tensors reach the same function, whose first check refuses them by name (rmsnorm_op.cpp says why).
TORCH_LIBRARY_IMPL(solbench, CPU, m) { m.impl("fused_add_rms_norm", &sb::ops::fused_add_rms_norm); }
TORCH_LIBRARY_IMPL(solbench, Autograd, m) { m.impl("fused_add_rms_norm", &sb::ops::fused_add_rms_norm_autograd); }
TORCH_LIBRARY_IMPL(solbench, ADInplaceOrView, m) {
  m.impl("fused_add_rms_norm", &sb::ops::fused_add_rms_norm_inplace);
}
