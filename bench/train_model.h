// A Llama-style training step in libtorch, for bench_e2e's training cases and train_profile (built only with
// libtorch, SOLBENCH_HAVE_TORCH). No torch type crosses this header (as layer.h).
//
// The model (train_config.h's TrainConfig), with tokens [batch, seq]:
//   x = embedding(tokens); per layer: h = RMSNorm(x); q, k, v = h Wq^T, h Wk^T, h Wv^T; RoPE (theta 500000)
//   on q and k; a = SDPA(q, k, v, causal, GQA); x = x + a Wo^T; h = RMSNorm(x);
//   x = x + Wd (SiLU(h Wg^T) * (h Wu^T)); then logits = RMSNorm(x) Wlm^T and the mean cross-entropy
//   against the next tokens.
// One step: the forward under autocast, loss.backward(), clip_grad_norm_ (max norm 1), AdamW, zero_grad.
//
// Mixed precision: fp32 master weights with bf16 autocast, the recipe of PyTorch's AMP for bf16. Autocast
// runs the projections, the LM head and SDPA in bf16 (their weights cast once a step and kept in its cache)
// and the loss in fp32 (log_softmax and nll_loss are on its fp32 list); gradients and AdamW's moments are
// fp32, as the weights they update. No gradient scaler: bf16 has fp32's exponent range, so gradients do not
// underflow as fp16's do. What autocast leaves alone stays fp32: the embedding's output, the residual stream
// (fp32 + the projections' bf16 output promotes to fp32) and so the RMSNorms, which autocast lists in no
// policy and which therefore run in their input's dtype, fp32, in both implementations. Each norm's output
// is cast to bf16 once, where autocast would cast it again for each projection that reads it. RoPE runs in
// bf16, on the projections' output, with cos and sin cast to it.
//
// The two implementations differ only in the RMSNorms (forward and backward):
//   torch     at::rms_norm, PyTorch's fused CUDA kernel and its autograd (FusedRmsNormBackward0);
//   solbench  our kernels through a torch::autograd::Function (train_norm.h): the forward by the variant
//             rmsnorm::best_variant picks, the backward by rmsnorm_backward::best_variant's.
// The attention is SDPA's choice of backend on both (this suite has no attention backward kernel). Residual
// add + RMSNorm is not fused with fused_add_rmsnorm: its kernel takes x, the residual and w in one dtype
// and writes both in place, while here a bf16 projection output meets the fp32 residual stream and autograd
// needs the residual unchanged; a cast and two copies would cost more traffic than the fusion saves.
//
// C++'s torch::optim::AdamW has no foreach or fused implementation (Python's foreach=True / fused=True): it
// updates one parameter at a time with a few elementwise kernels each, as Python's for-loop AdamW does.
// torch::nn::utils::clip_grad_norm_ returns the norm as a double, so the step synchronizes there once, before
// the optimizer; the loss stays on the device.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "train_config.h"

namespace sb::bench {

enum class TrainNorm { torch, solbench };
inline constexpr TrainNorm kTrainNorms[] = {TrainNorm::torch, TrainNorm::solbench};
const char* train_norm_name(TrainNorm norm);  // "torch_eager", "solbench": the impl field of a case name

// bf16_autocast: what is benchmarked (above). fp32: autocast off, every op in fp32 (cuBLAS without TF32, as
// libtorch defaults): the reference the verification's tolerance comes from.
enum class TrainPrecision { bf16_autocast, fp32 };

// The model's RMSNorm epsilon and RoPE base: Llama 3's rms_norm_eps and rope_theta.
inline constexpr double kTrainEps = 1e-5;
inline constexpr double kTrainRopeTheta = 500000.0;
// The step's gradient clipping: the global L2 norm of every gradient, at most this.
inline constexpr double kTrainMaxGradNorm = 1.0;
// Distinct batches of the task a trainer holds on the device; step s trains on batch s mod kBatchPool (fresh
// data for the verification's steps, and no host work in a timed step).
inline constexpr int64_t kBatchPool = 32;

// What Trainer and verify_training throw when PyTorch runs out of device memory (a std::runtime_error with its
// message): a config too large for the GPU, which a benchmark skips rather than fails.
struct TrainOutOfMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Trainer {
 public:
  // The model's weights (N(0, 0.02^2) as Hugging Face's Llama initializes them, RMSNorm weights 1) and the
  // task's batches from `seed`, and AdamW (betas 0.9 and 0.95, weight decay 0.1, eps 1e-8, the config's
  // learning rate), on the current device, written on `stream` (every later call gets it) and synchronized.
  // `batch`: sequences a step. Throws std::runtime_error with PyTorch's reason (TrainOutOfMemory for memory).
  Trainer(const TrainConfig& config, TrainNorm norm, TrainPrecision precision, int64_t batch, uint64_t seed,
          cudaStream_t stream);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // One training step on `stream` (what is timed). Throws std::runtime_error with PyTorch's reason.
  void step(cudaStream_t stream);
  // The loss of the last step (synchronizes); NaN before the first.
  double last_loss(cudaStream_t stream);
  int64_t steps() const;
  int64_t tokens_per_step() const;
  // The backend at::scaled_dot_product_attention picks for the model's attention, as at::_fused_sdp_choice
  // numbers them (0 math, 1 flash, 2 efficient, 3 cuDNN); -1 where it would refuse.
  int sdpa_backend(cudaStream_t stream);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The verification of a config's training step: three runs from one seed of config.verify_steps steps of
// config.verify_batch sequences each, torch and solbench in bf16 and torch in fp32. It passes when
//   (a) the loss falls: each bf16 run's last loss is below config.loss_drop x its first, and
//   (b) solbench's losses equal torch's within bf16's own noise: max over steps |L_solbench - L_fp32| <=
//       2 max over steps |L_torch - L_fp32| + 1e-4, FlashAttention's rule (docs/MEASUREMENT.md) applied to the
//       loss curve: ours may stray from the fp32 run by twice what PyTorch's bf16 run does (1e-4 nats for a
//       run bf16 left exactly on the fp32 curve).
struct TrainCheck {
  bool ok = false;
  double err = 0;        // max |L_solbench - L_fp32| / tolerance: <= 1 passes (b)
  double torch_err = 0;  // max |L_torch - L_fp32| / tolerance (at most 1/2 by construction)
  double tolerance = 0;
  std::string message;   // what was checked, with the numbers, and what failed
  std::vector<double> torch_loss, solbench_loss, fp32_loss;  // per step
};
// Throws std::runtime_error with PyTorch's reason where a run cannot be built or stepped.
TrainCheck verify_training(const TrainConfig& config, uint64_t seed, cudaStream_t stream);

// The caching allocator's peak of allocated bytes on the current device since reset_peak_memory(): what a
// training step holds at its fullest (weights, gradients, optimizer state, activations), not what it reserves.
void reset_peak_memory();
std::size_t peak_memory_bytes();

}  // namespace sb::bench
