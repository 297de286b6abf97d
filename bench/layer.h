// One Llama-style decoder layer in libtorch that runs our kernels, for bench_e2e's end-to-end numbers (built
// only with libtorch, SOLBENCH_HAVE_TORCH). No torch type and no std::string crosses this header (as
// ref/torch/torch_attention.h).
//
// The layer (Hugging Face's LlamaDecoderLayer, eager, inference): with x [batch, q_len, hidden],
//   h = RMSNorm(x); q, k, v = h Wq^T, h Wk^T, h Wv^T; RoPE (theta 500000) on q and k at positions
//   kv_len - q_len ..; k, v written into the KV cache at those positions; a = attention(q, K cache,
//   V cache) (causal at prefill, GQA); x1 = x + a Wo^T; out = x1 + Wd (SiLU(RMSNorm(x1) Wg^T) *
//   (RMSNorm(x1) Wu^T)),
// with every tensor BSHD (attention/attention.h), the cache [batch, kv_len, heads_kv, head_dim]. The
// implementations differ only in who computes the two RMSNorms and the attention:
//   torch_eager       at::rms_norm and at::scaled_dot_product_attention's own choice of backend
//                     (enable_gqa), as a PyTorch model runs them (PyTorch 2.11 on the H200 picks cuDNN:
//                     the sdpa_backend counter of these rows says which);
//   torch_sdpa_flash  at::rms_norm and SDPA's FlashAttention-2 backend;
//   solbench          our RMSNorm and attention, the variants the registry picks for the layer
//                     (rmsnorm::best_variant: vectorized; attention::best_variant: decode_splitk at
//                     decode, wgmma_flash at prefill where it runs, else tiled_flash);
//   solbench_norms    our RMSNorm with torch_eager's attention, and solbench_attention,
//                     at::rms_norm with our attention: what each of our two kernels buys alone;
//   ref_rest_of_layer a reference, not a layer: the same ops with the two RMSNorms and the attention left
//                     out (the norms pass x through, the attention passes q through), so that each
//                     layer's time less this one is what its norms and attention cost inside the layer.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

#include "common/dtype.h"
#include "layer_shapes.h"

namespace sb::bench {

enum class LayerImpl { torch_eager, torch_sdpa_flash, solbench, solbench_norms, solbench_attention, ref_rest_of_layer };
inline constexpr LayerImpl kLayerImpls[] = {LayerImpl::solbench,         LayerImpl::solbench_norms,
                                            LayerImpl::solbench_attention, LayerImpl::torch_eager,
                                            LayerImpl::torch_sdpa_flash,   LayerImpl::ref_rest_of_layer};
const char* layer_impl_name(LayerImpl impl);  // the impl field of a case name, as above

// The outcome of verifying one implementation: err = max|out - ref32| / (2 max|ref_same - ref32| + 1e-5),
// <= 1 passes (FlashAttention's rule, as bench_attention applies it to attention alone), where ref32 is
// the layer computed in fp32 from the same weights and inputs with attention by SDPA's math op in fp64
// (torch_ref::reference), and ref_same the layer in the case's dtype with at::rms_norm and the math op
// computing attention in that dtype. A NaN anywhere fails. ref_rest_of_layer is PyTorch's ops alone, with
// no dtype-rounded twin to set a tolerance: it is held to 2^-5 of its fp32 twin's largest magnitude (four
// bf16 ulps there), so that a broken pass (NaN, wrong shapes, garbage) fails while rounding passes.
struct LayerCheck {
  bool ok = false;
  double err = 0;
  double max_abs_err = 0;  // max|out - ref32|
  double tolerance = 0;    // 2 max|ref_same - ref32| + 1e-5 (ref_rest_of_layer: 2^-5 max|ref32|)
  const char* nan_in = "";  // "" or which of out, ref32 and ref_same holds a NaN
};

// verify()'s references, on the host, with a fingerprint of the weights and inputs they came from
// (Layer::take_references, Layer::adopt_references).
struct LayerReferences;

class Layer {
 public:
  // Random weights (N(0, 1 / fan_in)), RMSNorm weights 1 + N(0, 0.1^2), input N(0, 1) and a KV cache
  // N(0, 1), from `seed`, on the current device in `dtype`, written on `stream` (the one every later call
  // gets) and synchronized. Throws std::invalid_argument for fp32 (the tolerance comes from a 16-bit
  // layer) and std::runtime_error with PyTorch's reason when it refuses (out of memory, say).
  Layer(const LayerShape& shape, DType dtype, uint64_t seed, cudaStream_t stream);
  ~Layer();
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  // "" or why `impl` cannot run this layer (the solbench layers: best_variant's reason).
  const char* supports(LayerImpl impl) const;
  // One forward pass on `stream` (what is timed): "" or PyTorch's reason for refusing it. The output is a
  // fresh tensor from PyTorch's caching allocator, dropped at return.
  const char* forward(LayerImpl impl, cudaStream_t stream);
  // One forward pass with every buffer our kernels write poisoned with NaN first, checked against the
  // references (computed once per layer); *refused is "" or PyTorch's reason.
  LayerCheck verify(LayerImpl impl, cudaStream_t stream, const char** refused);
  // Moves the references verify() computed out of this layer, to the host (its next verify() computes them
  // again); null before any verify().
  std::shared_ptr<LayerReferences> take_references(cudaStream_t stream);
  // References taken from an earlier layer: kept if their fingerprint equals this layer's (the sizes and
  // the exact sums of the 16-bit words of every weight, the input and the caches' positions a pass reads
  // before writing), so that bench_e2e, whose interleaved repetitions rebuild a layer whenever the shape
  // changes, computes them once per shape, not once per implementation; otherwise
  // dropped. Returns whether they were kept.
  bool adopt_references(std::shared_ptr<LayerReferences> r, cudaStream_t stream);
  // Which backend at::scaled_dot_product_attention picks for this layer's attention (torch_eager), as
  // at::_fused_sdp_choice numbers it: 0 math, 1 flash, 2 efficient, 3 cuDNN; -1 when it would refuse.
  int sdpa_default_backend(cudaStream_t stream);
  // Which of our attention variants the solbench layers run (attention::best_variant's pick): its index
  // in attention::variants() (kernels/attention/variants.def); -1 where none runs the layer.
  int attention_variant() const;

 private:
  void init(uint64_t seed);
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace sb::bench
