// fp64 CPU reference for paged decode attention (kernels/paged_attention/paged_attention.h): each sequence's
// keys are gathered from the pages its block table names into a contiguous [len, heads_kv, head_dim] cache,
// then attention_ref.h computes the row. Values are doubles the caller converted from the stored dtype.
#pragma once

#include <cstdint>
#include <vector>

namespace sb::ref {

struct PagedRefShape {
  int64_t heads_q, heads_kv, head_dim, q_len, page_size, max_pages;
  bool causal;
  double scale;
};

// Sequence b's K or V, gathered: [len, heads_kv, head_dim] from pool [num_pages, page_size, heads_kv,
// head_dim] through block_table row b ([batch, max_pages]). Throws std::invalid_argument for a page index
// outside [0, num_pages) among the pages the sequence uses.
std::vector<double> gather_sequence(const PagedRefShape& s, const double* pool, int64_t num_pages,
                                    const int32_t* block_table, int64_t b, int64_t len);

// One output row: sequence b, query head hq, query token qi, into o_row[0, head_dim). q: [batch, q_len,
// heads_q, head_dim]; k, v: sequence b's gathered cache (gather_sequence) of len keys.
void paged_attention_row(const PagedRefShape& s, const double* q, const double* k, const double* v, int64_t b,
                         int64_t len, int64_t hq, int64_t qi, double* o_row);

}  // namespace sb::ref
