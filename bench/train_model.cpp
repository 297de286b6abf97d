// The training step (train_model.h): the model, one step, and the verification of the two norms in it.
#include "train_model.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "ref/torch/torch_common.h"
#include "train_norm.h"

namespace sb::bench {

namespace {

constexpr double kInitStd = 0.02;  // Hugging Face's LlamaConfig.initializer_range

// Autocast on `device` in bf16 for a scope, as Python's torch.autocast(device, torch.bfloat16) does: the
// previous state comes back at the end, and the cache of cast weights is cleared when the outermost scope
// ends (a weight updated by the optimizer must be cast again next step). enabled = false: nothing changes.
class AutocastScope {
 public:
  AutocastScope(at::DeviceType device, bool enabled) : device_(device), enabled_(enabled) {
    if (!enabled_) return;
    was_enabled_ = at::autocast::is_autocast_enabled(device_);
    was_dtype_ = at::autocast::get_autocast_dtype(device_);
    at::autocast::set_autocast_dtype(device_, at::kBFloat16);
    at::autocast::set_autocast_enabled(device_, true);
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(device_, was_enabled_);
    at::autocast::set_autocast_dtype(device_, was_dtype_);
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  at::DeviceType device_;
  bool enabled_;
  bool was_enabled_ = false;
  at::ScalarType was_dtype_ = at::kBFloat16;
};

struct LayerWeights {
  at::Tensor norm1, wq, wk, wv, wo, norm2, wg, wu, wd;
};

// The model's parameters (fp32 leaves that require grad) and its RoPE tables.
struct Model {
  at::Tensor embed;  // [vocab, hidden]
  std::vector<LayerWeights> layers;
  at::Tensor final_norm, head;  // [hidden], [vocab, hidden]
  at::Tensor cos32, sin32, cos16, sin16;  // [1, seq, 1, head_dim]: fp32 and bf16

  std::vector<at::Tensor> parameters() const {
    std::vector<at::Tensor> all{embed};
    for (const LayerWeights& l : layers)
      for (const at::Tensor& t : {l.norm1, l.wq, l.wk, l.wv, l.wo, l.norm2, l.wg, l.wu, l.wd}) all.push_back(t);
    all.push_back(final_norm);
    all.push_back(head);
    return all;
  }
};

// Random weights from the current default generator of `device` (seeded by the caller), in a fixed order, so
// that one seed gives every implementation the same model.
Model init_model(const TrainConfig& c, const at::Device& device) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  auto matrix = [&](int64_t out, int64_t in) { return (at::randn({out, in}, f32) * kInitStd).requires_grad_(true); };
  auto ones = [&]() { return at::ones({c.hidden}, f32).requires_grad_(true); };
  const int64_t q = c.heads_q * c.head_dim, kv = c.heads_kv * c.head_dim;
  Model m;
  m.embed = matrix(c.vocab, c.hidden);
  for (int64_t i = 0; i < c.layers; ++i)
    m.layers.push_back({ones(), matrix(q, c.hidden), matrix(kv, c.hidden), matrix(kv, c.hidden), matrix(c.hidden, q),
                        ones(), matrix(c.ffn, c.hidden), matrix(c.ffn, c.hidden), matrix(c.hidden, c.ffn)});
  m.final_norm = ones();
  m.head = matrix(c.vocab, c.hidden);
  // RoPE at positions 0 .. seq - 1: inv_freq[i] = theta^(-2i / d), the angles repeated for both halves
  // (Hugging Face's rotate_half convention, as bench/layer.cpp).
  const at::Tensor inv_freq = at::pow(kTrainRopeTheta, -at::arange(0, c.head_dim, 2, f32) / double(c.head_dim));
  const at::Tensor freqs = at::outer(at::arange(c.seq, f32), inv_freq);
  const at::Tensor emb = at::cat({freqs, freqs}, -1).view({1, c.seq, 1, c.head_dim});
  m.cos32 = emb.cos();
  m.sin32 = emb.sin();
  m.cos16 = m.cos32.to(at::kBFloat16);
  m.sin16 = m.sin32.to(at::kBFloat16);
  return m;
}

// x * cos + rotate_half(x) * sin on BSHD x, in x's dtype.
at::Tensor rope(const at::Tensor& x, const Model& m) {
  const bool bf16 = x.scalar_type() == at::kBFloat16;
  const at::Tensor& cos = bf16 ? m.cos16 : m.cos32;
  const at::Tensor& sin = bf16 ? m.sin16 : m.sin32;
  const int64_t half = x.size(-1) / 2;
  const at::Tensor rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + rotated * sin;
}

// The mean cross-entropy of the model on inputs and targets [batch, seq] (train_model.h's forward). `half`:
// autocast is on, so the norms' fp32 outputs are cast to bf16 once for the projections that read them.
at::Tensor forward_loss(const TrainConfig& c, const Model& m, TrainNorm norm, bool half, const at::Tensor& inputs,
                        const at::Tensor& targets) {
  const int64_t b = inputs.size(0), s = inputs.size(1);
  auto normed = [&](const at::Tensor& x, const at::Tensor& w) {
    const at::Tensor y = train_rms_norm(norm, x, w, kTrainEps);
    return half ? y.to(at::kBFloat16) : y;
  };
  at::Tensor x = at::embedding(m.embed, inputs);
  for (const LayerWeights& l : m.layers) {
    const at::Tensor h = normed(x, l.norm1);
    const at::Tensor q = rope(at::linear(h, l.wq).view({b, s, c.heads_q, c.head_dim}), m);
    const at::Tensor k = rope(at::linear(h, l.wk).view({b, s, c.heads_kv, c.head_dim}), m);
    const at::Tensor v = at::linear(h, l.wv).view({b, s, c.heads_kv, c.head_dim});
    const at::Tensor a = at::scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                          /*attn_mask=*/std::nullopt, /*dropout_p=*/0.0,
                                                          /*is_causal=*/true, /*scale=*/std::nullopt,
                                                          /*enable_gqa=*/true)
                             .transpose(1, 2)
                             .reshape({b, s, c.heads_q * c.head_dim});
    x = x + at::linear(a, l.wo);
    const at::Tensor h2 = normed(x, l.norm2);
    x = x + at::linear(at::silu(at::linear(h2, l.wg)) * at::linear(h2, l.wu), l.wd);
  }
  const at::Tensor logits = at::linear(normed(x, m.final_norm), m.head);
  return at::cross_entropy_loss(logits.reshape({b * s, c.vocab}), targets.reshape({b * s}));
}

// Runs f on `stream`; a c10::Error (PyTorch refusing: a bad shape, say) becomes std::runtime_error with
// PyTorch's message, without its backtrace, and running out of memory TrainOutOfMemory.
template <typename F>
auto on_stream(cudaStream_t stream, const char* what, F&& f) {
  try {
    c10::cuda::CUDAStreamGuard guard(torch_ref::external_stream(stream));
    return f();
  } catch (const c10::OutOfMemoryError& e) {
    throw TrainOutOfMemory(std::string(what) + ": PyTorch is out of device memory: " + e.what_without_backtrace());
  } catch (const c10::Error& e) {
    throw std::runtime_error(std::string(what) + ": PyTorch refused: " + e.what_without_backtrace());
  }
}

}  // namespace

const char* train_norm_name(TrainNorm norm) {
  switch (norm) {
    case TrainNorm::torch: return "torch_eager";
    case TrainNorm::solbench: return "solbench";
  }
  return "unknown";
}

struct Trainer::State {
  TrainConfig config;
  TrainNorm norm;
  TrainPrecision precision;
  int64_t batch;
  Model model;
  std::vector<at::Tensor> params;
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::vector<at::Tensor> inputs, targets;  // kBatchPool batches, [batch, seq] each
  at::Tensor loss;                          // the last step's, on the device
  int64_t steps = 0;
};

Trainer::Trainer(const TrainConfig& config, TrainNorm norm, TrainPrecision precision, int64_t batch, uint64_t seed,
                 cudaStream_t stream)
    : s_(std::make_unique<State>()) {
  State& st = *s_;
  st.config = config;
  st.norm = norm;
  st.precision = precision;
  st.batch = batch;
  // On the suite's stream, which does not synchronize with the legacy default stream (as bench/layer.cpp).
  on_stream(stream, "Trainer", [&] {
    const at::Device device(at::kCUDA, static_cast<c10::DeviceIndex>(torch_ref::current_device()));
    at::manual_seed(seed);
    st.model = init_model(config, device);
    st.params = st.model.parameters();
    st.optimizer = std::make_unique<torch::optim::AdamW>(
        st.params, torch::optim::AdamWOptions(config.lr).betas({0.9, 0.95}).weight_decay(0.1).eps(1e-8));
    for (int64_t i = 0; i < kBatchPool; ++i) {
      std::vector<int64_t> tokens = synthetic_batch(batch, config.seq, config.vocab, seed, i);
      const at::Tensor all = at::from_blob(tokens.data(), {batch, config.seq + 1}, at::kLong).to(device);
      st.inputs.push_back(all.narrow(1, 0, config.seq).contiguous());
      st.targets.push_back(all.narrow(1, 1, config.seq).contiguous());
    }
    return 0;
  });
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
}

Trainer::~Trainer() = default;

void Trainer::step(cudaStream_t stream) {
  State& st = *s_;
  on_stream(stream, "training step", [&] {
    const int64_t i = st.steps % kBatchPool;
    const bool half = st.precision == TrainPrecision::bf16_autocast;
    at::Tensor loss;
    {
      AutocastScope autocast(at::kCUDA, half);
      loss = forward_loss(st.config, st.model, st.norm, half, st.inputs[i], st.targets[i]);
    }
    loss.backward();
    torch::nn::utils::clip_grad_norm_(st.params, kTrainMaxGradNorm);
    st.optimizer->step();
    st.optimizer->zero_grad();
    st.loss = loss.detach();
    ++st.steps;
    return 0;
  });
}

double Trainer::last_loss(cudaStream_t stream) {
  if (!s_->loss.defined()) return std::numeric_limits<double>::quiet_NaN();
  return on_stream(stream, "loss", [&] { return s_->loss.item<double>(); });
}

int64_t Trainer::steps() const { return s_->steps; }

int64_t Trainer::tokens_per_step() const { return s_->batch * s_->config.seq; }

int Trainer::sdpa_backend(cudaStream_t stream) {
  const State& st = *s_;
  try {
    return on_stream(stream, "sdpa_backend", [&] {
      const TrainConfig& c = st.config;
      const at::ScalarType t = st.precision == TrainPrecision::fp32 ? at::kFloat : at::kBFloat16;
      const auto opts = st.model.embed.options().dtype(t);
      const at::Tensor q = at::empty({st.batch, c.heads_q, c.seq, c.head_dim}, opts).requires_grad_(true);
      const at::Tensor k = at::empty({st.batch, c.heads_kv, c.seq, c.head_dim}, opts).requires_grad_(true);
      return static_cast<int>(at::_fused_sdp_choice(q, k, k, std::nullopt, 0.0, /*is_causal=*/true, std::nullopt,
                                                    /*enable_gqa=*/true));
    });
  } catch (const std::runtime_error&) {
    return -1;
  }
}

namespace {

std::string loss_curve(const char* name, const std::vector<double>& loss) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s %.4f -> %.4f", name, loss.front(), loss.back());
  return buf;
}

}  // namespace

TrainCheck verify_training(const TrainConfig& config, uint64_t seed, cudaStream_t stream) {
  if (config.verify_steps < 2) throw std::invalid_argument("verify_training: verify_steps must be >= 2");
  // One run at a time: each trainer and the blocks it cached go back before the next is built.
  auto run = [&](TrainNorm norm, TrainPrecision precision) {
    std::vector<double> loss;
    {
      Trainer t(config, norm, precision, config.verify_batch, seed, stream);
      for (int64_t i = 0; i < config.verify_steps; ++i) {
        t.step(stream);
        loss.push_back(t.last_loss(stream));
      }
    }
    c10::cuda::CUDACachingAllocator::emptyCache();
    return loss;
  };
  TrainCheck r;
  r.torch_loss = run(TrainNorm::torch, TrainPrecision::bf16_autocast);
  r.solbench_loss = run(TrainNorm::solbench, TrainPrecision::bf16_autocast);
  r.fp32_loss = run(TrainNorm::torch, TrainPrecision::fp32);
  double torch_dev = 0, ours_dev = 0;
  bool finite = true;
  for (std::size_t i = 0; i < r.fp32_loss.size(); ++i) {
    finite = finite && std::isfinite(r.torch_loss[i]) && std::isfinite(r.solbench_loss[i]) && std::isfinite(r.fp32_loss[i]);
    torch_dev = std::max(torch_dev, std::abs(r.torch_loss[i] - r.fp32_loss[i]));
    ours_dev = std::max(ours_dev, std::abs(r.solbench_loss[i] - r.fp32_loss[i]));
  }
  r.tolerance = 2 * torch_dev + 1e-4;
  r.err = finite ? ours_dev / r.tolerance : std::numeric_limits<double>::infinity();
  r.torch_err = torch_dev / r.tolerance;
  auto falls = [&](const std::vector<double>& loss) { return loss.back() < config.loss_drop * loss.front(); };
  char numbers[256];
  std::snprintf(numbers, sizeof numbers,
                "; max |L_solbench - L_fp32| %.3g against a tolerance of %.3g (2 max |L_torch - L_fp32| + 1e-4)",
                ours_dev, r.tolerance);
  r.message = std::to_string(config.verify_steps) + " steps of " + std::to_string(config.verify_batch) +
              " sequences, loss " + loss_curve("torch", r.torch_loss) + ", " +
              loss_curve("solbench", r.solbench_loss) + ", " + loss_curve("fp32", r.fp32_loss) + numbers;
  std::string failed;
  if (!finite) failed += "; a loss is not finite";
  for (const auto& [name, loss] : {std::pair{"torch", &r.torch_loss}, {"solbench", &r.solbench_loss}})
    if (!falls(*loss))
      failed += std::string("; the ") + name + " loss did not fall below " + std::to_string(config.loss_drop) +
                " x its first";
  if (finite && r.err > 1) failed += "; solbench's loss strays from the fp32 run by more than the tolerance";
  r.ok = failed.empty();
  r.message += failed;
  return r;
}

void reset_peak_memory() {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(torch_ref::current_device()));
}

std::size_t peak_memory_bytes() {
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(torch_ref::current_device()));
  return static_cast<std::size_t>(
      stats.allocated_bytes[static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak);
}

}  // namespace sb::bench
