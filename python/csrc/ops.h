// What the PyTorch operators over kernels/ share: the dtype mapping, the argument checks and the one place
// a kernel-side exception becomes a PyTorch error. The op layer validates, picks a variant from the op's
// registry and launches; kernels/ itself keeps no torch dependency.
#pragma once

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/util/Exception.h>

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/dtype.h"

namespace sb::ops {

// The suite's dtype of `t`, or an error naming the op, the argument and the dtypes the ops take.
inline DType dtype_of(const at::Tensor& t, const char* op, const char* arg) {
  switch (t.scalar_type()) {
    case at::kFloat: return DType::f32;
    case at::kHalf: return DType::f16;
    case at::kBFloat16: return DType::bf16;
    default: break;
  }
  TORCH_CHECK(false, "solbench::", op, ": ", arg, " has dtype ", t.scalar_type(),
              "; the kernels take float32, float16 or bfloat16");
}

// Every refusal names the op and the argument.
inline void check_cuda(const at::Tensor& t, const char* op, const char* arg) {
  TORCH_CHECK(t.is_cuda(), "solbench::", op, ": ", arg, " is on ", t.device(), "; the kernels need CUDA tensors");
}

// A CUDA tensor on the device and with the dtype of `like`.
inline void check_like(const at::Tensor& t, const at::Tensor& like, const char* op, const char* arg,
                       const char* like_arg) {
  check_cuda(t, op, arg);
  TORCH_CHECK(t.device() == like.device(), "solbench::", op, ": ", arg, " is on ", t.device(), " but ", like_arg,
              " is on ", like.device());
  TORCH_CHECK(t.scalar_type() == like.scalar_type(), "solbench::", op, ": ", arg, " has dtype ", t.scalar_type(),
              " but ", like_arg, " has ", like.scalar_type(), "; the kernels take one dtype for all operands");
}

// A norm's weight: a contiguous [hidden] tensor (check_like checks its device and dtype).
inline void check_norm_weight(const at::Tensor& weight, int64_t hidden, const char* op) {
  TORCH_CHECK(weight.dim() == 1 && weight.size(0) == hidden, "solbench::", op, ": weight has shape ", weight.sizes(),
              " but x's last dimension is ", hidden, " (weight must be [", hidden, "])");
  TORCH_CHECK(weight.is_contiguous(), "solbench::", op, ": weight must be contiguous (stride ", weight.stride(0), ")");
}

// The kernels read rows of contiguous elements. `remedy` ends the message: how the caller makes one (a copy),
// or "" where a copy would not do (an operand written in place).
inline void check_contiguous(const at::Tensor& t, const char* op, const char* arg, const char* remedy) {
  TORCH_CHECK(t.is_contiguous(), "solbench::", op, ": ", arg, " must be contiguous (its strides are ", t.strides(), ")",
              remedy);
}

// The variant names of an op's registry, in teaching order (the `*_variants` ops).
template <typename V>
std::vector<std::string> names(const std::vector<V>& variants) {
  std::vector<std::string> out;
  for (const V& v : variants) out.emplace_back(v.name);
  return out;
}

// The op's call of a registry with workspaces (attention, paged_attention): `name`'s variant, or best(p) for
// "auto"; refused with its reason before its workspace is allocated (a workspace for a problem a variant refuses
// can exceed the GPU's memory); the workspace from PyTorch's caching allocator (freed into the cache on return:
// later work on the stream runs after the kernels); run() on PyTorch's current stream. Inside translated().
template <typename Problem, typename Variant>
void run_chosen(const char* op, Problem p, const std::string& name, const at::TensorOptions& device,
                const Variant& (*best)(const Problem&), const Variant& (*by_name)(const std::string&),
                void (*run)(const Variant&, const Problem&, cudaStream_t)) {
  p.validate();
  const Variant& v = name == "auto" ? best(p) : by_name(name);
  if (const std::string why = v.supports(p); !why.empty())
    throw std::invalid_argument(std::string(op) + "/" + v.name + " does not support this problem: " + why);
  at::Tensor workspace;
  if (const std::size_t bytes = v.workspace_bytes(p)) {
    workspace = at::empty({static_cast<int64_t>(bytes)}, device.dtype(at::kByte));
    p.workspace = workspace.data_ptr();
    p.workspace_size = bytes;
  }
  run(v, p, at::cuda::getCurrentCUDAStream().stream());
}

// Runs f; a kernel-side exception (an invalid or unsupported problem, an unknown variant name with the
// known names, a CUDA or cuBLAS failure) becomes a c10::Error, which Python sees as a RuntimeError, its
// message prefixed with the op's name.
template <typename F>
auto translated(const char* op, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const c10::Error&) {
    throw;
  } catch (const std::exception& e) {
    TORCH_CHECK(false, "solbench::", op, ": ", e.what());
  }
}

}  // namespace sb::ops
