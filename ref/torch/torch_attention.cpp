// PyTorch attention baselines: SDPA with each backend forced, and the manual composite.
// Each SDPA backend is called through the ATen op that scaled_dot_product_attention dispatches to
// (aten/src/ATen/native/transformers/attention.cpp), so the number is that kernel's, with only the
// preprocessing SDPA itself would do for it.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "ref/torch/torch_attention.h"
#include "ref/torch/torch_common.h"

namespace sb::torch_ref {

namespace {

constexpr const char* kOk = "";
constexpr const char* kNeedsMask =
    "bottom-right causal with q_len != kv_len needs an explicit mask, which this backend does not take";
constexpr const char* kCudnnKeylessRows =
    "causal with q_len > kv_len leaves query rows that see no key; SDPA masks for cuDNN with -65504, not -inf, "
    "so those rows would average V instead of being 0";
constexpr const char* kCompositeKeylessRows =
    "causal with q_len > kv_len leaves query rows that see no key, and softmax over an all -inf row is NaN, not 0";
// Gates of SDPA's can_use_cudnn_attention (sdp_utils.cpp) that the cuDNN op itself does not check.
constexpr const char* kCudnnDtype = "cuDNN attention takes fp16 and bf16 only (SDPA's check_dtypes_low_precision)";
constexpr const char* kCudnnKvLen1 = "cudnn SDPA does not support key/value sequence length 1.";

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
// What SDPA fills masked positions with for cuDNN (convert_boolean_attn_mask_cudnn in attention.cpp,
// a workaround for -inf in cuDNN).
constexpr double kCudnnMasked = -65504.0;

// [batch, heads, seq, dim] view of BSHD memory: from_blob + permute, no copy.
at::Tensor bhsd(const void* data, int64_t batch, int64_t seq, int64_t heads, int64_t dim, const at::TensorOptions& opts) {
  return at::from_blob(const_cast<void*>(data), {batch, seq, heads, dim}, opts).permute({0, 2, 1, 3});
}

struct Views {
  at::Tensor q, k, v, o;
};

Views wrap(const attention::Problem& p) {
  const auto opts = at::TensorOptions().dtype(scalar_type(p.dtype)).device(at::kCUDA, current_device());
  return {bhsd(p.q, p.batch, p.q_len, p.heads_q, p.head_dim, opts),
          bhsd(p.k, p.batch, p.kv_len, p.heads_kv, p.head_dim, opts),
          bhsd(p.v, p.batch, p.kv_len, p.heads_kv, p.head_dim, opts),
          bhsd(p.o, p.batch, p.q_len, p.heads_q, p.head_dim, opts)};
}

// Hugging Face's repeat_kv: [B, Hkv, S, D] -> [B, Hkv * groups, S, D], query head h reading kv head
// h / groups. A copy (expand, then reshape of a non-viewable layout).
at::Tensor repeat_kv(const at::Tensor& t, int64_t groups) {
  if (groups == 1) return t;
  const auto s = t.sizes();
  return t.unsqueeze(2).expand({s[0], s[1], groups, s[2], s[3]}).reshape({s[0], s[1] * groups, s[2], s[3]});
}

// SDPA's is_causal is top-left aligned (tril(ones(q_len, kv_len))), ours bottom-right: they agree when
// q_len == kv_len, and with q_len == 1 the single query row sees every key, so there is nothing to mask.
// Otherwise the mask must be explicit.
enum class Mask { none, is_causal, bias };

Mask mask_kind(const attention::Problem& p) {
  if (!p.causal || p.q_len == 1) return Mask::none;
  return p.q_len == p.kv_len ? Mask::is_causal : Mask::bias;
}

// Additive bottom-right causal mask for query rows [row0, row0 + rows): `masked` where key
// j > row + kv_len - q_len, 0 elsewhere (full + triu: two kernels). Rows are allocated padded to 16
// elements and sliced back, so every stride but the last is aligned, as SDPA's preprocess_mask
// arranges for the efficient kernel.
at::Tensor causal_bias(const attention::Problem& p, int64_t row0, int64_t rows, double masked,
                       const at::TensorOptions& opts) {
  const int64_t padded = (p.kv_len + 15) / 16 * 16;
  return at::full({rows, padded}, masked, opts).triu_(p.kv_len - p.q_len + 1 + row0).narrow(1, 0, p.kv_len);
}

// Context::allowFP16BF16ReductionMathSDP set for its lifetime, so that the math op computes fp16/bf16
// problems in their own dtype (FlashAttention's "same-dtype" reference). Process-wide state: not for
// use concurrently with other math-SDPA calls.
class MathReductionInDtype {
 public:
  MathReductionInDtype() : saved_(at::globalContext().allowFP16BF16ReductionMathSDP()) {
    at::globalContext().setAllowFP16BF16ReductionMathSDP(true);
  }
  ~MathReductionInDtype() { at::globalContext().setAllowFP16BF16ReductionMathSDP(saved_); }
  MathReductionInDtype(const MathReductionInDtype&) = delete;
  MathReductionInDtype& operator=(const MathReductionInDtype&) = delete;

 private:
  bool saved_;
};

}  // namespace

const char* sdpa_backend_name(SdpaBackend backend) {
  switch (backend) {
    case SdpaBackend::flash: return "torch_sdpa_flash";
    case SdpaBackend::efficient: return "torch_sdpa_efficient";
    case SdpaBackend::cudnn: return "torch_sdpa_cudnn";
    case SdpaBackend::math: return "torch_sdpa_math";
  }
  return "torch_sdpa_unknown";
}

const char* sdpa(const attention::Problem& p, SdpaBackend backend, cudaStream_t stream, bool write_o) {
  p.validate();
  const Mask mask = mask_kind(p);
  if (backend == SdpaBackend::flash && mask == Mask::bias) return kNeedsMask;
  if (backend == SdpaBackend::cudnn) {
    if (p.dtype == DType::f32) return kCudnnDtype;
    if (p.kv_len == 1) return kCudnnKvLen1;
    if (p.causal && p.q_len > p.kv_len) return kCudnnKeylessRows;
  }
  return guarded(stream, [&]() -> const char* {
    const Views t = wrap(p);
    const bool is_causal = mask == Mask::is_causal;
    const std::optional<double> scale = p.softmax_scale();
    std::optional<at::Tensor> bias;
    at::Tensor out;
    switch (backend) {
      case SdpaBackend::flash:
        // GQA is native: SDPA passes K/V with heads_kv heads straight to this op. No mask argument
        // (FlashAttention-2 aligns its causal flag bottom-right, which is why SDPA refuses is_causal with
        // q_len != kv_len for this backend: check_flash_causal_non_square_seqlens).
        out = std::get<0>(at::_scaled_dot_product_flash_attention(t.q, t.k, t.v, /*dropout_p=*/0.0, is_causal,
                                                                  /*return_debug_mask=*/false, scale));
        break;
      case SdpaBackend::efficient: {
        // This kernel has no GQA (SDPA rejects enable_gqa for it), so K/V are expanded to heads_q heads
        // first: that copy is part of what this baseline costs. Its mask is additive, [B, H, q, kv].
        const int64_t groups = p.heads_q / p.heads_kv;
        if (mask == Mask::bias)
          bias = causal_bias(p, 0, p.q_len, kNegInf, t.q.options()).expand({p.batch, p.heads_q, p.q_len, p.kv_len});
        out = std::get<0>(at::_scaled_dot_product_efficient_attention(t.q, repeat_kv(t.k, groups), repeat_kv(t.v, groups),
                                                                      bias, /*compute_log_sumexp=*/false,
                                                                      /*dropout_p=*/0.0, is_causal, scale));
        break;
      }
      case SdpaBackend::cudnn:
        // GQA is native (the cuDNN graph takes K/V with their own head count). The op broadcasts a 2-D
        // additive mask to [B, 1, q, kv] itself.
        if (mask == Mask::bias) bias = causal_bias(p, 0, p.q_len, kCudnnMasked, t.q.options());
        out = std::get<0>(at::_scaled_dot_product_cudnn_attention(t.q, t.k, t.v, bias, /*compute_log_sumexp=*/false,
                                                                  /*dropout_p=*/0.0, is_causal,
                                                                  /*return_debug_mask=*/false, scale));
        break;
      case SdpaBackend::math:
        // fp16/bf16 are upcast to fp32 inside (PyTorch's default), GQA by enable_gqa's repeat_interleave,
        // and rows that see no key come out 0 (_safe_softmax).
        if (mask == Mask::bias) bias = causal_bias(p, 0, p.q_len, kNegInf, t.q.options());
        out = std::get<0>(at::_scaled_dot_product_attention_math(t.q, t.k, t.v, bias, /*dropout_p=*/0.0, is_causal,
                                                                 /*dropout_mask=*/std::nullopt, scale,
                                                                 /*enable_gqa=*/true));
        break;
    }
    if (write_o) t.o.copy_(out);
    return kOk;
  });
}

const char* manual_composite(const attention::Problem& p, cudaStream_t stream, bool write_o) {
  p.validate();
  if (p.causal && p.q_len > p.kv_len) return kCompositeKeylessRows;
  return guarded(stream, [&]() -> const char* {
    const Views t = wrap(p);
    const int64_t groups = p.heads_q / p.heads_kv;
    const at::Tensor k = repeat_kv(t.k, groups);
    const at::Tensor v = repeat_kv(t.v, groups);
    at::Tensor scores = at::matmul(t.q, k.transpose(-2, -1)) * p.softmax_scale();
    if (p.causal && p.q_len > 1) {  // with q_len == 1 the bottom-right mask keeps every key
      const at::Tensor keep =
          at::ones({p.q_len, p.kv_len}, t.q.options().dtype(at::kBool)).tril(p.kv_len - p.q_len);
      scores.masked_fill_(keep.logical_not(), kNegInf);
    }
    const at::Tensor probs = at::softmax(scores, -1, at::kFloat).to(t.q.scalar_type());
    const at::Tensor out = at::matmul(probs, v);
    if (write_o) t.o.copy_(out);
    return kOk;
  });
}

const char* reference(const attention::Problem& p, void* ref32_out, void* ref_same_out, cudaStream_t stream) {
  p.validate();
  if (!ref32_out || !ref_same_out) throw std::invalid_argument("torch_ref::reference: null output buffer");
  return guarded(stream, [&]() -> const char* {
    const Views t = wrap(p);
    const at::Tensor ref32 = bhsd(ref32_out, p.batch, p.q_len, p.heads_q, p.head_dim, t.q.options().dtype(at::kFloat));
    const at::Tensor ref_same = bhsd(ref_same_out, p.batch, p.q_len, p.heads_q, p.head_dim, t.q.options());
    const std::optional<double> scale = p.softmax_scale();
    const int64_t groups = p.heads_q / p.heads_kv;
    const MathReductionInDtype in_dtype;
    // One batch element and up to `rows` query rows at a time: an fp64 score matrix under ~1 GiB. The
    // mask is explicit (the is_causal flag would align each chunk top-left).
    const int64_t rows = std::clamp<int64_t>((int64_t{1} << 30) / (p.heads_q * p.kv_len * 8), 1, p.q_len);
    for (int64_t b = 0; b < p.batch; ++b) {
      const at::Tensor k = repeat_kv(t.k.narrow(0, b, 1), groups);
      const at::Tensor v = repeat_kv(t.v.narrow(0, b, 1), groups);
      const at::Tensor k64 = k.to(at::kDouble), v64 = v.to(at::kDouble);
      for (int64_t row0 = 0; row0 < p.q_len; row0 += rows) {
        const int64_t n = std::min(rows, p.q_len - row0);
        const at::Tensor q = t.q.narrow(0, b, 1).narrow(2, row0, n);
        auto attend = [&](const at::Tensor& qc, const at::Tensor& kc, const at::Tensor& vc) {
          std::optional<at::Tensor> bias;
          if (p.causal) bias = causal_bias(p, row0, n, kNegInf, qc.options());
          return std::get<0>(at::_scaled_dot_product_attention_math(qc, kc, vc, bias, /*dropout_p=*/0.0,
                                                                    /*is_causal=*/false, /*dropout_mask=*/std::nullopt,
                                                                    scale, /*enable_gqa=*/false));
        };
        ref32.narrow(0, b, 1).narrow(2, row0, n).copy_(attend(q.to(at::kDouble), k64, v64));
        ref_same.narrow(0, b, 1).narrow(2, row0, n).copy_(attend(q, k, v));
      }
    }
    // Rows that see no key: 0 (the math op's safe softmax already gives 0; this keeps it explicit
    // without a nan_to_num that would also hide a stray NaN elsewhere).
    if (p.causal && p.q_len > p.kv_len) {
      ref32.narrow(2, 0, p.q_len - p.kv_len).zero_();
      ref_same.narrow(2, 0, p.q_len - p.kv_len).zero_();
    }
    return kOk;
  });
}

void release_cached_memory() { c10::cuda::CUDACachingAllocator::emptyCache(); }

}  // namespace sb::torch_ref
