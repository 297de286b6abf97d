// The inputs of a paged decode case and their check: a ragged batch assembled from one AttentionData per
// sequence (attention_case.h: inputs drawn on the device, the fp64 reference, FlashAttention's tolerance
// rule). Each sequence's K and V rows are copied into page pools through a block table that scatters every
// sequence's pages over the pool (3 spare pages that no sequence owns), its Q into one batch. verify() gives
// each sequence's rows of O back to its own AttentionData to check, so a wrong page, length or split shows as
// that sequence failing its own reference.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "attention_case.h"
#include "harness/device.h"
#include "paged_attention/paged_attention.h"
#include "verify.h"

namespace sb::bench {

struct PagedDims {
  int64_t heads_q, heads_kv, head_dim, q_len;
  bool causal;
};

class PagedData {
 public:
  // lens: each sequence's keys; pages of page_size tokens, the pool's pages shuffled by `seed`. Synchronizes.
  PagedData(const PagedDims& dims, DType dtype, const std::vector<int64_t>& lens, int64_t page_size, uint64_t seed,
            cudaStream_t stream);
  PagedData(const PagedData&) = delete;
  PagedData& operator=(const PagedData&) = delete;

  // The problem on these inputs, with the workspace reserved (0 splits: the variant's plan).
  paged_attention::Problem problem() const { return problem_; }
  void reserve_workspace(std::size_t bytes);
  void poison_output();
  // Every sequence against its own reference: the first failure's message and the largest error over the
  // tolerance. Synchronizes.
  Check verify();
  const std::vector<int32_t>& lengths() const { return lens_; }

 private:
  cudaStream_t stream_;
  std::vector<std::unique_ptr<AttentionData>> seqs_;
  std::vector<int32_t> lens_, table_;
  DeviceBuffer q_, o_, k_pool_, v_pool_, d_lens_, d_table_, workspace_;
  paged_attention::Problem problem_;
};

}  // namespace sb::bench
