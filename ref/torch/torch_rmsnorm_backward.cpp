#include "ref/torch/torch_rmsnorm_backward.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/csrc/autograd/autograd.h>

#include <memory>
#include <tuple>

#include "ref/torch/torch_common.h"

namespace sb::torch_ref {

namespace {

// The forward graph of the last problem seen: its leaves, its output and the incoming gradient.
struct ForwardGraph {
  std::tuple<const void*, const void*, const void*, int64_t, int64_t, DType, double> key;
  at::Tensor x, w, dy, y;
};

}  // namespace

void rms_norm_backward_autograd(const rmsnorm_backward::Problem& p, cudaStream_t stream, bool write_outputs) {
  p.validate();
  thread_local std::unique_ptr<ForwardGraph> graph;
  c10::cuda::CUDAStreamGuard guard(external_stream(stream));
  c10::AutoGradMode grad_mode(true);  // a caller in inference or no-grad mode still builds the graph
  const auto key = std::make_tuple(p.x, p.w, p.dy, p.rows, p.hidden, p.dtype, p.eps);
  if (!graph || graph->key != key) {
    graph.reset();  // the old graph's saved tensors go back to the allocator first
    const auto opts = at::TensorOptions().dtype(scalar_type(p.dtype)).device(at::kCUDA, current_device());
    auto g = std::make_unique<ForwardGraph>();
    g->key = key;
    g->x = at::from_blob(const_cast<void*>(p.x), {p.rows, p.hidden}, opts).requires_grad_(true);
    g->w = at::from_blob(const_cast<void*>(p.w), {p.hidden}, opts).requires_grad_(true);
    g->dy = at::from_blob(const_cast<void*>(p.dy), {p.rows, p.hidden}, opts);
    g->y = at::rms_norm(g->x, {p.hidden}, g->w, p.eps);
    graph = std::move(g);
  }
  const std::vector<at::Tensor> grads =
      torch::autograd::grad({graph->y}, {graph->x, graph->w}, {graph->dy}, /*retain_graph=*/true);
  if (write_outputs) {
    at::from_blob(p.dx, {p.rows, p.hidden}, graph->dy.options()).copy_(grads[0]);
    at::from_blob(p.dw, {p.hidden}, graph->dy.options()).copy_(grads[1]);
  }
}

}  // namespace sb::torch_ref
