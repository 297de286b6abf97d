// PyTorch attention baselines, built only with libtorch
// (SOLBENCH_HAVE_TORCH). No torch type and no std::string crosses this header: the rest of the suite
// compiles without torch's headers, and libtorch may be built with another C++ ABI.
//
// Every function reads problem.q/k/v (BSHD, see attention/attention.h) through tensor views without
// copying them, runs on `stream`, and returns "" on success or PyTorch's reason for refusing the
// problem (a static or thread_local C string, valid until the next refusal on this thread). None throws
// c10::Error; an invalid problem still throws std::invalid_argument from Problem::validate().
#pragma once

#include <cuda_runtime.h>

#include "attention/attention.h"

namespace sb::torch_ref {

// The backends of F.scaled_dot_product_attention, each called through its own ATen op, as
// torch.nn.attention.sdpa_kernel(<backend>) makes SDPA do.
enum class SdpaBackend { flash, efficient, cudnn, math };

// "torch_sdpa_flash", "torch_sdpa_efficient", "torch_sdpa_cudnn", "torch_sdpa_math": the impl name
// in benchmark case names.
const char* sdpa_backend_name(SdpaBackend backend);

// SDPA with `backend` forced. The result is a fresh tensor from PyTorch's caching allocator; with
// write_o it is also copied into problem.o (BSHD) for verification (the copy is not what is timed).
const char* sdpa(const attention::Problem& p, SdpaBackend backend, cudaStream_t stream, bool write_o);

// The composite a PyTorch user writes (Hugging Face's eager attention): repeat_kv, Q K^T * scale, the
// bottom-right causal mask ones(q_len, kv_len).tril(kv_len - q_len), softmax in fp32, .to(dtype), @ V.
const char* manual_composite(const attention::Problem& p, cudaStream_t stream, bool write_o);

// The libtorch reference for large problems (the fp64 CPU reference checks sampled rows; this one
// covers every element), for FlashAttention's rule max|ours - ref32| <= 2 * max|ref_same - ref32| + 1e-5.
// Both through SDPA's math op with an explicit bottom-right causal mask, written BSHD into
// caller-provided device buffers:
//   ref32_out    fp32, [batch, q_len, heads_q, head_dim]: computed from inputs upcast to fp64 (no TF32
//                setting can touch it), stored as fp32;
//   ref_same_out the problem's dtype, same shape: the math op computing in that dtype (fp16/bf16
//                matmuls and softmax output, as FlashAttention's tests compute their "pt" reference;
//                sets the process-wide allowFP16BF16ReductionMathSDP flag while it runs).
// Rows with no visible key (causal, q_len > kv_len) are 0 in both. Computed in chunks of one batch
// element and enough query rows to keep a score matrix under ~1 GiB.
const char* reference(const attention::Problem& p, void* ref32_out, void* ref_same_out, cudaStream_t stream);

// Returns the blocks PyTorch's caching allocator holds but no tensor uses to the device (between
// shapes: the math and composite baselines can keep tens of GB cached at long sequences).
void release_cached_memory();

}  // namespace sb::torch_ref
