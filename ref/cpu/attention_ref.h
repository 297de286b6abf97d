// fp64 CPU reference for scaled dot-product attention, O = softmax(scale * Q K^T + mask) V, per head.
// The caller converts fp16/bf16/fp32 inputs to double. No dependencies beyond the C++17 standard library.
//
// Layout (the suite's layout, "BSHD" as FlashAttention uses it), all contiguous, row-major:
//   Q, O: [batch, q_len, heads_q, head_dim]    (b, i, h, d) at ((b * q_len + i) * heads_q + h) * head_dim + d
//   K, V: [batch, kv_len, heads_kv, head_dim]  (b, j, h, d) at ((b * kv_len + j) * heads_kv + h) * head_dim + d
//
// GQA/MQA: query head h reads kv head h / (heads_q / heads_kv); heads_q must be a multiple of heads_kv.
// Causal masking is bottom-right aligned (FlashAttention, vLLM, FlashInfer): query row i may attend key j
// iff j <= i + (kv_len - q_len). With q_len > kv_len the first q_len - kv_len rows see no key; such a
// fully masked row outputs 0, not NaN.
// Softmax is computed in double with the row max subtracted. Invalid arguments throw
// std::invalid_argument naming the field.
#pragma once

#include <cstdint>

namespace sb::ref {

struct AttentionRefShape {
  int64_t batch, heads_q, heads_kv, head_dim, q_len, kv_len;
  bool causal;
  double scale;  // softmax scale, usually 1 / sqrt(head_dim)
};

// Whole problem: o receives batch * q_len * heads_q * head_dim values.
void attention(const AttentionRefShape& shape, const double* q, const double* k, const double* v, double* o);

// One output row (batch b, query head hq, query position qi) into o_row[0, head_dim), reading the full
// q/k/v arrays. Used to verify sampled rows of problems too large to check in full.
void attention_row(const AttentionRefShape& shape, const double* q, const double* k, const double* v,
                   int64_t b, int64_t hq, int64_t qi, double* o_row);

}  // namespace sb::ref
