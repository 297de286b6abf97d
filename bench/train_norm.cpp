// The training step's RMSNorm (train_norm.h): PyTorch's, or ours through a torch::autograd::Function.
#include "train_norm.h"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cstdint>
#include <vector>

#include "rmsnorm/rmsnorm.h"
#include "rmsnorm_backward/rmsnorm_backward.h"

namespace sb::bench {

namespace {

DType dtype_of(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat: return DType::f32;
    case at::kHalf: return DType::f16;
    case at::kBFloat16: return DType::bf16;
    default: break;
  }
  TORCH_CHECK(false, "solbench rms_norm: dtype ", t.scalar_type(), " is not one of float, half and bfloat16");
}

void check_inputs(const at::Tensor& x, const at::Tensor& w) {
  TORCH_CHECK(x.is_cuda() && w.is_cuda(), "solbench rms_norm: x and w must be CUDA tensors");
  TORCH_CHECK(x.dim() >= 1 && x.numel() > 0, "solbench rms_norm: x must have at least one element");
  TORCH_CHECK(w.dim() == 1 && w.size(0) == x.size(-1), "solbench rms_norm: w must be [", x.size(-1), "], got ",
              w.sizes());
  TORCH_CHECK(x.device() == w.device(), "solbench rms_norm: x and w must be on one device");
}

// Our kernels as an autograd node. Forward: y from rmsnorm's best variant; x and w saved (the inputs
// themselves: nothing is allocated for them). Backward: dx and dw from rmsnorm_backward's best variant, which
// recomputes each row's rstd from x rather than have the forward write it (our forward kernels do not).
// Both run on the current stream, in x's dtype, w cast to it; dw is returned in w's dtype.
class SolbenchRmsNorm : public torch::autograd::Function<SolbenchRmsNorm> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w,
                            double eps) {
    RECORD_FUNCTION("solbench::rms_norm", std::vector<c10::IValue>{});
    check_inputs(x, w);
    const at::Tensor xc = x.contiguous();
    const at::Tensor wc = w.to(x.scalar_type()).contiguous();
    at::Tensor y = at::empty_like(xc);
    rmsnorm::Problem p;
    p.hidden = x.size(-1);
    p.rows = x.numel() / p.hidden;
    p.eps = eps;
    p.dtype = dtype_of(x);
    p.x = xc.data_ptr();
    p.w = wc.data_ptr();
    p.y = y.data_ptr();
    rmsnorm::run(rmsnorm::best_variant(p), p, at::cuda::getCurrentCUDAStream().stream());
    ctx->save_for_backward({x, w});
    ctx->saved_data["eps"] = eps;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    RECORD_FUNCTION("solbench::rms_norm_backward", std::vector<c10::IValue>{});
    const torch::autograd::variable_list saved = ctx->get_saved_variables();
    const at::Tensor x = saved[0].contiguous();
    const at::Tensor& w = saved[1];
    const at::Tensor wc = w.to(x.scalar_type()).contiguous();
    const at::Tensor dy = grads[0].to(x.scalar_type()).contiguous();
    at::Tensor dx = at::empty_like(x);
    at::Tensor dw = at::empty_like(wc);
    rmsnorm_backward::Problem p;
    p.hidden = x.size(-1);
    p.rows = x.numel() / p.hidden;
    p.eps = ctx->saved_data["eps"].toDouble();
    p.dtype = dtype_of(x);
    p.x = x.data_ptr();
    p.w = wc.data_ptr();
    p.dy = dy.data_ptr();
    p.dx = dx.data_ptr();
    p.dw = dw.data_ptr();
    const at::Tensor workspace =
        at::empty({static_cast<int64_t>(rmsnorm_backward::workspace_bytes(p))}, x.options().dtype(at::kByte));
    p.workspace = workspace.data_ptr();
    p.workspace_size = static_cast<std::size_t>(workspace.numel());
    rmsnorm_backward::run(rmsnorm_backward::best_variant(p), p, at::cuda::getCurrentCUDAStream().stream());
    return {dx, dw.to(w.scalar_type()), at::Tensor()};
  }
};

}  // namespace

at::Tensor train_rms_norm(TrainNorm norm, const at::Tensor& x, const at::Tensor& w, double eps) {
  switch (norm) {
    case TrainNorm::torch: return at::rms_norm(x, {x.size(-1)}, w.to(x.scalar_type()), eps);
    case TrainNorm::solbench: return SolbenchRmsNorm::apply(x, w, eps);
  }
  TORCH_CHECK(false, "train_rms_norm: unknown norm");
}

}  // namespace sb::bench
