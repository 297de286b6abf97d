// Attention forward: O = softmax(scale * Q K^T + mask) V, per batch and query head, with grouped
// query attention (q head h reads kv head h / (heads_q / heads_kv)).
//
// Memory layout (all contiguous, "BSHD" as FlashAttention uses it):
//   Q, O: [batch, q_len, heads_q, head_dim]      K, V: [batch, kv_len, heads_kv, head_dim]
// Causal masking is bottom-right aligned when q_len != kv_len (FlashAttention, vLLM, FlashInfer):
// query row i attends key j iff j <= i + (kv_len - q_len); a row that attends no key outputs 0.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/dtype.h"

namespace sb::attention {

struct Problem {
  int64_t batch = 0;
  int64_t heads_q = 0;
  int64_t heads_kv = 0;
  int64_t head_dim = 0;
  int64_t q_len = 0;
  int64_t kv_len = 0;
  bool causal = false;
  double scale = 0;  // softmax scale; 0 means 1 / sqrt(head_dim)
  DType dtype = DType::bf16;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  void* workspace = nullptr;          // at least the variant's workspace_bytes(problem), 256-byte aligned
  std::size_t workspace_size = 0;
  cublasHandle_t cublas = nullptr;    // for variants built on cuBLAS; its stream is set by launch
  int64_t num_splits = 0;             // kTakesNumSplits variants: 0 = their heuristic, else this many

  // Decode: a few new tokens (q_len <= kMaxDecodeQLen) against a longer KV cache; prefill otherwise. The
  // workload best_variant() picks for, and the one bench/attention_shapes.h names a case by.
  static constexpr int64_t kMaxDecodeQLen = 16;
  bool decode() const { return q_len <= kMaxDecodeQLen && kv_len > q_len; }

  double softmax_scale() const;
  // Query-key pairs that are not masked, per (batch, query head): q_len * kv_len, or the
  // bottom-right causal count.
  int64_t unmasked_pairs() const;
  // 2 FLOPs per multiply-add in Q K^T and in P V over the unmasked pairs: 4 * head_dim per pair.
  double flops() const;
  // The least traffic: read Q, K, V once and write O once.
  std::size_t bytes() const;
  // K and V alone: what decode GB/s is reported against.
  std::size_t kv_bytes() const;
  // Throws std::invalid_argument naming the offending field.
  void validate() const;
};

// What a variants.def line declares about its variant besides the name and summary (flags, or'd).
enum Traits : unsigned {
  kGeneral = 0,               // made for no workload in particular
  kForDecode = 1u << 0,       // made for decode problems (Problem::decode())
  kForPrefill = 1u << 1,      // made for prefill problems
  kTakesNumSplits = 1u << 2,  // honours Problem::num_splits, a forced split count (bench_attention's split sweep)
};

struct Variant {
  const char* name;
  const char* summary;
  unsigned traits;                                 // Traits, from the variant's line in variants.def
  std::string (*supports)(const Problem&);         // "" or the reason it cannot run a valid problem
  std::size_t (*workspace_bytes)(const Problem&);  // device scratch it needs in problem.workspace
  void (*launch)(const Problem&, cudaStream_t);    // never allocates, synchronizes, prints or reads a clock
};

const std::vector<Variant>& variants();  // kernels/attention/variants.def, in teaching order
const Variant& variant(const std::string& name);

// The variant to run `p` with when the caller has no preference: the first that supports it among the
// variants made for p's workload (kForDecode or kForPrefill), the later in variants.def the earlier tried,
// then among the others, again the later first. Decode: decode_splitk; prefill: wgmma_flash where it runs
// (an sm_90 GPU, a build for sm_90a), else tiled_flash. Throws std::invalid_argument for an invalid problem
// (validate()) or, with every variant's reason, one that no variant supports.
const Variant& best_variant(const Problem& p);

// validate(), supports() (unsupported: std::invalid_argument with the reason), a workspace check,
// then launch().
void run(const Variant& v, const Problem& p, cudaStream_t stream);

}  // namespace sb::attention
