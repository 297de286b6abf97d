// One decoder layer in libtorch (layer.h), its norms and attention computed each of the ways layer.h lists.
#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "attention/attention.h"
#include "attention_case.h"
#include "common/check.h"
#include "ref/torch/torch_attention.h"
#include "ref/torch/torch_common.h"
#include "layer.h"
#include "rmsnorm/rmsnorm.h"

namespace sb::bench {

namespace {

constexpr double kEps = 1e-5;           // Llama 3's rms_norm_eps
constexpr double kRopeTheta = 500000.0;  // Llama 3's rope_theta
constexpr const char* kOk = "";

// Who computes the norms and the attention in one forward pass.
enum class Norm { torch, solbench, none };
enum class Attn { sdpa_default, sdpa_flash, solbench, ref_fp64, ref_same, none };

struct Weights {
  at::Tensor wq, wk, wv, wo, wg, wu, wd, norm1, norm2;
  Weights to(at::ScalarType t) const {
    return {wq.to(t), wk.to(t), wv.to(t), wo.to(t), wg.to(t), wu.to(t), wd.to(t), norm1.to(t), norm2.to(t)};
  }
};

// x * cos + rotate_half(x) * sin, Hugging Face's apply_rotary_pos_emb, on BSHD x with cos/sin [1, q, 1, d].
at::Tensor rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  const at::Tensor rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + rotated * sin;
}

}  // namespace

const char* layer_impl_name(LayerImpl impl) {
  switch (impl) {
    case LayerImpl::torch_eager: return "torch_eager";
    case LayerImpl::torch_sdpa_flash: return "torch_sdpa_flash";
    case LayerImpl::solbench: return "solbench";
    case LayerImpl::solbench_norms: return "solbench_norms";
    case LayerImpl::solbench_attention: return "solbench_attention";
    case LayerImpl::ref_rest_of_layer: return "ref_rest_of_layer";
  }
  return "unknown";
}

struct Layer::State {
  LayerShape shape;
  DType dtype;
  at::Tensor x;                 // [batch, q_len, hidden]
  Weights w;
  at::Tensor k_cache, v_cache;  // [batch, kv_len, heads_kv, head_dim]
  at::Tensor cos, sin;          // [1, q_len, 1, head_dim] in the layer's dtype (fp32 ones for the reference)
  at::Tensor cos32, sin32;
  at::Tensor workspace;         // our attention variant's workspace, bytes
  // Our kernels, as the registry picks them for this layer (best_variant), or why none runs it.
  const rmsnorm::Variant* norm = nullptr;
  const attention::Variant* attn = nullptr;
  std::string norm_refusal, attn_refusal;  // "" where norm / attn is set
  // The references, computed once per layer (verify): the layer in fp32 with fp64 attention, in the
  // layer's dtype with the math op's attention in that dtype (both as fp32), the tolerance they give, and
  // the rest of the layer (no norms, no attention) in fp32.
  at::Tensor ref32, ref_same, rest32;
  double tolerance = 0;

  // Sets norm and attn (or their refusals) and sizes the workspace, once the tensors exist.
  void pick_kernels();

  // What the references depend on, exactly: the size and the sum of the 16-bit words (as integers) of
  // every weight, x, and the caches' first kv_len - q_len positions (a pass writes the new tokens' K and V
  // into the rest before attention reads them, so those differ with the passes run, not the output).
  std::vector<int64_t> fingerprint() const {
    const int64_t past = shape.kv_len - shape.q_len;
    std::vector<int64_t> f;
    for (const at::Tensor& t : {x, w.wq, w.wk, w.wv, w.wo, w.wg, w.wu, w.wd, w.norm1, w.norm2,
                                k_cache.narrow(1, 0, past), v_cache.narrow(1, 0, past)}) {
      f.push_back(t.numel());
      // view(kShort) keeps the strides (same element size): the caches' narrowed views are summed in place.
      f.push_back(t.numel() ? at::sum(t.view(at::kShort), at::kLong).item<int64_t>() : 0);
    }
    return f;
  }

  attention::Problem attention_problem(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& o,
                                       DType t) const {
    attention::Problem p = problem_of(
        {shape.batch, shape.heads_q, shape.heads_kv, shape.head_dim, shape.q_len, shape.kv_len, shape.q_len > 1}, t);
    p.q = q.data_ptr();
    p.k = k.data_ptr();
    p.v = v.data_ptr();
    p.o = o.data_ptr();
    p.workspace = workspace.defined() && workspace.numel() ? workspace.data_ptr() : nullptr;
    p.workspace_size = workspace.defined() ? static_cast<std::size_t>(workspace.numel()) : 0;
    return p;
  }

  at::Tensor rms_norm(Norm kind, const at::Tensor& in, const at::Tensor& weight, bool poison,
                      cudaStream_t stream) const {
    switch (kind) {
      case Norm::none: return in;
      case Norm::torch: return at::rms_norm(in, {shape.hidden}, weight, kEps);
      case Norm::solbench: {
        at::Tensor y = poison ? at::full_like(in, std::numeric_limits<double>::quiet_NaN()) : at::empty_like(in);
        rmsnorm::Problem p;
        p.rows = shape.batch * shape.q_len;
        p.hidden = shape.hidden;
        p.eps = kEps;
        p.dtype = dtype;
        p.x = in.data_ptr();
        p.w = weight.data_ptr();
        p.y = y.data_ptr();
        if (!norm) throw std::invalid_argument("Layer: " + norm_refusal);
        rmsnorm::run(*norm, p, stream);
        return y;
      }
    }
    throw std::logic_error("Layer: unknown norm");
  }

  // BSHD q [b, q, hq, d], caches [b, kv, hkv, d] -> BSHD [b, q, hq, d].
  at::Tensor attention(Attn kind, const at::Tensor& q, const at::Tensor& kc, const at::Tensor& vc, bool poison,
                       cudaStream_t stream) const {
    const bool causal = shape.q_len > 1;
    auto bhsd = [](const at::Tensor& t) { return t.transpose(1, 2); };
    switch (kind) {
      case Attn::none: return q;
      case Attn::sdpa_default:
        return at::scaled_dot_product_attention(bhsd(q), bhsd(kc), bhsd(vc), /*attn_mask=*/std::nullopt,
                                                /*dropout_p=*/0.0, causal, /*scale=*/std::nullopt,
                                                /*enable_gqa=*/true)
            .transpose(1, 2);
      case Attn::sdpa_flash:
        // GQA is native (torch_attention.cpp); causal is bottom-right, which is top-left here (q_len is 1
        // or kv_len).
        return std::get<0>(at::_scaled_dot_product_flash_attention(bhsd(q), bhsd(kc), bhsd(vc), /*dropout_p=*/0.0,
                                                                   causal, /*return_debug_mask=*/false,
                                                                   /*scale=*/std::nullopt))
            .transpose(1, 2);
      case Attn::solbench: {
        at::Tensor o = poison ? at::full_like(q, std::numeric_limits<double>::quiet_NaN()) : at::empty_like(q);
        if (!attn) throw std::invalid_argument("Layer: " + attn_refusal);
        attention::run(*attn, attention_problem(q, kc, vc, o, dtype), stream);
        return o;
      }
      case Attn::ref_fp64:
      case Attn::ref_same: {
        // torch_ref::reference: ref32 from fp64, ref_same in the inputs' dtype; each pass keeps one.
        const DType t = q.scalar_type() == at::kFloat ? DType::f32 : dtype;
        at::Tensor out32 = at::empty(q.sizes(), q.options().dtype(at::kFloat));
        at::Tensor same = at::empty_like(q);
        const char* refused =
            torch_ref::reference(attention_problem(q, kc, vc, same, t), out32.data_ptr(), same.data_ptr(), stream);
        if (*refused) throw std::runtime_error(std::string("the attention reference refused: ") + refused);
        return kind == Attn::ref_fp64 ? out32 : same;
      }
    }
    throw std::logic_error("Layer: unknown attention");
  }

  // The layer once: out [b, q, hidden]. K and V of the new tokens overwrite the same cache positions on
  // every pass, so repeated passes compute the same output.
  at::Tensor forward(Norm norm_kind, Attn attn_kind, const Weights& wt, const at::Tensor& in, at::Tensor& kc,
                     at::Tensor& vc, const at::Tensor& c, const at::Tensor& s, bool poison, cudaStream_t stream) const {
    const LayerShape& sh = shape;
    const int64_t b = sh.batch, n = sh.q_len;
    const at::Tensor h = rms_norm(norm_kind, in, wt.norm1, poison, stream);
    at::Tensor q = rope(at::linear(h, wt.wq).view({b, n, sh.heads_q, sh.head_dim}), c, s);
    const at::Tensor k = rope(at::linear(h, wt.wk).view({b, n, sh.heads_kv, sh.head_dim}), c, s);
    const at::Tensor v = at::linear(h, wt.wv).view({b, n, sh.heads_kv, sh.head_dim});
    kc.narrow(1, sh.kv_len - n, n).copy_(k);
    vc.narrow(1, sh.kv_len - n, n).copy_(v);
    const at::Tensor a = attention(attn_kind, q, kc, vc, poison, stream).reshape({b, n, sh.heads_q * sh.head_dim});
    const at::Tensor x1 = in + at::linear(a, wt.wo);
    const at::Tensor h2 = rms_norm(norm_kind, x1, wt.norm2, poison, stream);
    return x1 + at::linear(at::silu(at::linear(h2, wt.wg)) * at::linear(h2, wt.wu), wt.wd);
  }
};

Layer::Layer(const LayerShape& shape, DType dtype, uint64_t seed, cudaStream_t stream)
    : s_(std::make_unique<State>()) {
  if (dtype == DType::f32)
    throw std::invalid_argument("Layer: dtype fp32 has no 16-bit layer to set the tolerance; use fp16 or bf16");
  State& st = *s_;
  st.shape = shape;
  st.dtype = dtype;
  // On the suite's stream, which does not synchronize with the legacy default stream: built anywhere else,
  // the first pass could read weights still being written (and a reference could come out NaN).
  const char* refused = torch_ref::guarded(stream, [&]() -> const char* {
    init(seed);
    return kOk;
  });
  if (*refused) throw std::runtime_error(std::string("Layer: PyTorch refused to build it: ") + refused);
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void Layer::init(uint64_t seed) {
  State& st = *s_;
  const LayerShape& shape = st.shape;
  const DType dtype = st.dtype;
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, torch_ref::current_device());
  const at::ScalarType t = torch_ref::scalar_type(dtype);
  at::manual_seed(seed);
  const int64_t h = shape.hidden, qd = shape.heads_q * shape.head_dim, kvd = shape.heads_kv * shape.head_dim;
  auto linear = [&](int64_t out, int64_t in) { return (at::randn({out, in}, f32) / std::sqrt(double(in))).to(t); };
  st.w = {linear(qd, h), linear(kvd, h), linear(kvd, h), linear(h, qd), linear(shape.ffn, h), linear(shape.ffn, h),
          linear(h, shape.ffn), (1 + 0.1 * at::randn({h}, f32)).to(t), (1 + 0.1 * at::randn({h}, f32)).to(t)};
  st.x = at::randn({shape.batch, shape.q_len, h}, f32).to(t);
  st.k_cache = at::randn({shape.batch, shape.kv_len, shape.heads_kv, shape.head_dim}, f32).to(t);
  st.v_cache = at::randn({shape.batch, shape.kv_len, shape.heads_kv, shape.head_dim}, f32).to(t);
  // RoPE at positions kv_len - q_len .. kv_len - 1: inv_freq[i] = theta^(-2i / d), angles repeated twice.
  const at::Tensor inv_freq = at::pow(kRopeTheta, -at::arange(0, shape.head_dim, 2, f32) / double(shape.head_dim));
  const at::Tensor pos = at::arange(shape.kv_len - shape.q_len, shape.kv_len, f32);
  const at::Tensor freqs = at::outer(pos, inv_freq);
  const at::Tensor emb = at::cat({freqs, freqs}, -1).view({1, shape.q_len, 1, shape.head_dim});
  st.cos32 = emb.cos();
  st.sin32 = emb.sin();
  st.cos = st.cos32.to(t);
  st.sin = st.sin32.to(t);
  st.pick_kernels();
}

void Layer::State::pick_kernels() {
  // The norms' problem as the layer runs it, every pointer one of the layer's allocations.
  rmsnorm::Problem n;
  n.rows = shape.batch * shape.q_len;
  n.hidden = shape.hidden;
  n.dtype = dtype;
  n.x = n.w = n.y = x.data_ptr();
  try {
    norm = &rmsnorm::best_variant(n);
  } catch (const std::invalid_argument& e) {
    norm_refusal = e.what();
  }
  at::Tensor probe = at::empty({shape.batch, shape.q_len, shape.heads_q, shape.head_dim}, x.options());
  const attention::Problem p = attention_problem(probe, k_cache, v_cache, probe, dtype);
  try {
    attn = &attention::best_variant(p);
  } catch (const std::invalid_argument& e) {
    attn_refusal = e.what();
  }
  const std::size_t ws = attn ? attn->workspace_bytes(p) : 0;
  workspace = at::empty({static_cast<int64_t>(ws)}, x.options().dtype(at::kByte));
}

Layer::~Layer() = default;

namespace {
std::tuple<Norm, Attn> kinds(LayerImpl impl) {
  switch (impl) {
    case LayerImpl::torch_eager: return {Norm::torch, Attn::sdpa_default};
    case LayerImpl::torch_sdpa_flash: return {Norm::torch, Attn::sdpa_flash};
    case LayerImpl::solbench: return {Norm::solbench, Attn::solbench};
    case LayerImpl::solbench_norms: return {Norm::solbench, Attn::sdpa_default};
    case LayerImpl::solbench_attention: return {Norm::torch, Attn::solbench};
    case LayerImpl::ref_rest_of_layer: return {Norm::none, Attn::none};
  }
  throw std::logic_error("Layer: unknown impl");
}
}  // namespace

const char* Layer::supports(LayerImpl impl) const {
  const auto [norm, attn] = kinds(impl);
  if (norm == Norm::solbench && !s_->norm_refusal.empty()) return s_->norm_refusal.c_str();
  if (attn == Attn::solbench && !s_->attn_refusal.empty()) return s_->attn_refusal.c_str();
  return kOk;
}

const char* Layer::forward(LayerImpl impl, cudaStream_t stream) {
  const auto [norm, attn] = kinds(impl);
  State& st = *s_;
  return torch_ref::guarded(stream, [&]() -> const char* {
    st.forward(norm, attn, st.w, st.x, st.k_cache, st.v_cache, st.cos, st.sin, false, stream);
    return kOk;
  });
}

struct LayerReferences {
  std::vector<int64_t> inputs;         // State::fingerprint() of the layer they were computed on
  at::Tensor ref32, ref_same, rest32;  // on the host; undefined where verify() had not computed them
  double tolerance = 0;
};

std::shared_ptr<LayerReferences> Layer::take_references(cudaStream_t stream) {
  State& st = *s_;
  if (!st.ref32.defined() && !st.rest32.defined()) return nullptr;
  auto r = std::make_shared<LayerReferences>();
  const char* refused = torch_ref::guarded(stream, [&]() -> const char* {
    r->inputs = st.fingerprint();
    for (auto [from, to] : {std::pair{&st.ref32, &r->ref32}, {&st.ref_same, &r->ref_same}, {&st.rest32, &r->rest32}})
      if (from->defined()) *to = from->cpu();
    r->tolerance = st.tolerance;
    return kOk;
  });
  st.ref32 = st.ref_same = st.rest32 = at::Tensor();
  return *refused ? nullptr : r;  // a refusal (host memory, say) only costs computing them again
}

bool Layer::adopt_references(std::shared_ptr<LayerReferences> r, cudaStream_t stream) {
  if (!r) return false;
  State& st = *s_;
  bool kept = false;
  torch_ref::guarded(stream, [&]() -> const char* {
    if (r->inputs != st.fingerprint()) return kOk;
    const at::Device device = st.x.device();
    if (r->ref32.defined()) {
      st.ref32 = r->ref32.to(device);
      st.ref_same = r->ref_same.to(device);
      st.tolerance = r->tolerance;
    }
    if (r->rest32.defined()) st.rest32 = r->rest32.to(device);
    kept = true;
    return kOk;
  });
  if (!kept) st.ref32 = st.ref_same = st.rest32 = at::Tensor();  // none half-adopted
  return kept;
}

LayerCheck Layer::verify(LayerImpl impl, cudaStream_t stream, const char** refused) {
  const auto [norm, attn] = kinds(impl);
  State& st = *s_;
  LayerCheck check;
  *refused = torch_ref::guarded(stream, [&]() -> const char* {
    const bool rest = impl == LayerImpl::ref_rest_of_layer;
    // fp32 weights, input and cache (their own copy: a pass writes the new tokens' K and V into it).
    auto fp32_pass = [&](Norm n, Attn a) {
      const Weights w32 = st.w.to(at::kFloat);
      at::Tensor k32 = st.k_cache.to(at::kFloat), v32 = st.v_cache.to(at::kFloat);
      return st.forward(n, a, w32, st.x.to(at::kFloat), k32, v32, st.cos32, st.sin32, false, stream);
    };
    if (!rest && !st.ref32.defined()) {
      st.ref32 = fp32_pass(Norm::torch, Attn::ref_fp64);
      st.ref_same = st.forward(Norm::torch, Attn::ref_same, st.w, st.x, st.k_cache, st.v_cache, st.cos, st.sin, false,
                               stream)
                        .to(at::kFloat);
      st.tolerance = 2.0 * (st.ref_same - st.ref32).abs().max().item<double>() + 1e-5;
    }
    if (rest && !st.rest32.defined()) st.rest32 = fp32_pass(Norm::none, Attn::none);
    const at::Tensor& ref32 = rest ? st.rest32 : st.ref32;
    const at::Tensor out =
        st.forward(norm, attn, st.w, st.x, st.k_cache, st.v_cache, st.cos, st.sin, true, stream).to(at::kFloat);
    check.max_abs_err = (out - ref32).abs().max().item<double>();
    check.tolerance = rest ? std::ldexp(ref32.abs().max().item<double>(), -5) : st.tolerance;
    check.err = check.max_abs_err / check.tolerance;
    check.ok = check.err <= 1.0;  // false for a NaN
    if (out.isnan().any().item<bool>()) check.nan_in = "out";
    else if (ref32.isnan().any().item<bool>()) check.nan_in = "ref32";
    else if (!rest && st.ref_same.isnan().any().item<bool>()) check.nan_in = "ref_same";
    if (*check.nan_in) check.ok = false;
    return kOk;
  });
  return check;
}

int Layer::attention_variant() const {
  const auto& all = attention::variants();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (&all[i] == s_->attn) return static_cast<int>(i);
  return -1;
}

int Layer::sdpa_default_backend(cudaStream_t stream) {
  State& st = *s_;
  int backend = -1;
  const char* refused = torch_ref::guarded(stream, [&]() -> const char* {
    const LayerShape& sh = st.shape;
    const at::Tensor q = at::empty({sh.batch, sh.q_len, sh.heads_q, sh.head_dim}, st.x.options()).transpose(1, 2);
    backend = static_cast<int>(at::_fused_sdp_choice(q, st.k_cache.transpose(1, 2), st.v_cache.transpose(1, 2),
                                                     std::nullopt, 0.0, st.shape.q_len > 1, std::nullopt,
                                                     /*enable_gqa=*/true));
    return kOk;
  });
  return *refused ? -1 : backend;
}

}  // namespace sb::bench
