#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/version.h>

#include "ref/torch/torch_baselines.h"
#include "ref/torch/torch_common.h"

namespace sb::torch_ref {

namespace {

struct Tensors {
  at::Tensor x, w, y;
};

Tensors wrap(const rmsnorm::Problem& p) {
  const auto opts = at::TensorOptions().dtype(scalar_type(p.dtype)).device(at::kCUDA, current_device());
  return {at::from_blob(const_cast<void*>(p.x), {p.rows, p.hidden}, opts),
          at::from_blob(const_cast<void*>(p.w), {p.hidden}, opts),
          at::from_blob(p.y, {p.rows, p.hidden}, opts)};
}

template <typename F>
void on_stream(cudaStream_t stream, F&& f) {
  c10::cuda::CUDAStreamGuard guard(external_stream(stream));
  f();
}

}  // namespace

const char* version() { return TORCH_VERSION; }

void rms_norm(const rmsnorm::Problem& p, cudaStream_t stream, bool write_y) {
  p.validate();
  on_stream(stream, [&] {
    Tensors t = wrap(p);
    at::Tensor out = at::rms_norm(t.x, {p.hidden}, t.w, p.eps);
    if (write_y) t.y.copy_(out);
  });
}

void rms_norm_composite(const rmsnorm::Problem& p, cudaStream_t stream, bool write_y) {
  p.validate();
  on_stream(stream, [&] {
    Tensors t = wrap(p);
    at::Tensor h = t.x.to(at::kFloat);
    const at::Tensor variance = h.pow(2).mean(-1, /*keepdim=*/true);
    h = h * at::rsqrt(variance + p.eps);
    at::Tensor out = t.w * h.to(t.x.scalar_type());
    if (write_y) t.y.copy_(out);
  });
}

}  // namespace sb::torch_ref
