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

// ref_kv_read at a paged problem: harness/fill.h's paged_read_sum_kernel over the pages the sequences own, one
// word a block into p.workspace (paged_kv_read_workspace_bytes of it). The bytes floor of a paged decode step.
std::size_t paged_kv_read_workspace_bytes(const paged_attention::Problem& p);
void launch_paged_kv_read(const paged_attention::Problem& p, cudaStream_t stream);

// An FP8 cache's scales: powers of two, so the values it holds are exact in fp16 and bf16 (harness/fill.h's
// round_through_e4m3) and the per-sequence references see them exactly. N(0, 1) keys and values span about
// +-5: K / 2^-6 and V / 2^-5 use e4m3's range up to 320 and 160 (of 448), V at a scale of its own so that a
// kernel that swaps the scales fails.
inline constexpr float kFp8KScale = 0x1p-6f, kFp8VScale = 0x1p-5f;

class PagedData {
 public:
  // lens: each sequence's keys; pages of page_size tokens, the pool's pages shuffled by `seed`. kv_cache
  // fp8_e4m3: each sequence's K and V are rounded through e4m3 at kFp8KScale and kFp8VScale (its reference sees
  // those values), the pools hold their e4m3 bytes. Synchronizes.
  PagedData(const PagedDims& dims, DType dtype, const std::vector<int64_t>& lens, int64_t page_size, uint64_t seed,
            cudaStream_t stream, paged_attention::KvCache kv_cache = paged_attention::KvCache::dtype);
  PagedData(const PagedData&) = delete;
  PagedData& operator=(const PagedData&) = delete;

  // The problem on these inputs, with the workspace reserved (0 splits: the variant's plan).
  paged_attention::Problem problem() const { return problem_; }
  void reserve_workspace(std::size_t bytes);
  void poison_output();
  // Every sequence against its own reference: the first failure's message and the largest error over the
  // tolerance. Synchronizes.
  Check verify();
  // The same for another output of this batch's shape (device memory): an FP8 cache's output against this
  // batch's references when this batch is its 16-bit twin (the same seed, unquantized).
  Check verify_output(const void* o);
  const void* output() const { return o_.get(); }
  // Runs launch_paged_kv_read once and checks that its blocks read every byte of every sequence's own K and V
  // exactly once: the sum of their word sums against CUB's over each sequence's contiguous K and V, in the
  // pools' element type (err 0 when equal). Synchronizes.
  Check check_kv_read();
  const std::vector<int32_t>& lengths() const { return lens_; }

 private:
  cudaStream_t stream_;
  std::vector<std::unique_ptr<AttentionData>> seqs_;
  std::vector<int32_t> lens_, table_;
  DeviceBuffer q_, o_, k_pool_, v_pool_, d_lens_, d_table_, workspace_;
  paged_attention::Problem problem_;
};

}  // namespace sb::bench
