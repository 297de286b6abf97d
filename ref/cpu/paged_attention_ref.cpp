#include "ref/cpu/paged_attention_ref.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ref/cpu/attention_ref.h"

namespace sb::ref {

std::vector<double> gather_sequence(const PagedRefShape& s, const double* pool, int64_t num_pages,
                                    const int32_t* block_table, int64_t b, int64_t len) {
  const int64_t row = s.heads_kv * s.head_dim;  // one token's values
  std::vector<double> out(static_cast<std::size_t>(len * row));
  for (int64_t t = 0; t < len; ++t) {
    const int64_t page = block_table[b * s.max_pages + t / s.page_size];
    if (page < 0 || page >= num_pages)
      throw std::invalid_argument("gather_sequence: block_table[" + std::to_string(b) + "][" +
                                  std::to_string(t / s.page_size) + "] = " + std::to_string(page) +
                                  " is outside [0, " + std::to_string(num_pages) + ")");
    const double* src = pool + (page * s.page_size + t % s.page_size) * row;
    std::copy(src, src + row, out.begin() + t * row);
  }
  return out;
}

void paged_attention_row(const PagedRefShape& s, const double* q, const double* k, const double* v, int64_t b,
                         int64_t len, int64_t hq, int64_t qi, double* o_row) {
  // Sequence b alone, as a batch of one: its query rows start at b * q_len * heads_q * head_dim.
  const AttentionRefShape one{1, s.heads_q, s.heads_kv, s.head_dim, s.q_len, len, s.causal, s.scale};
  attention_row(one, q + b * s.q_len * s.heads_q * s.head_dim, k, v, 0, hq, qi, o_row);
}

}  // namespace sb::ref
