// GPU tests of paged decode (kernels/paged_attention). Each case is a ragged batch assembled from one
// AttentionData per sequence (bench/attention_case.h: inputs drawn on the device, the fp64 reference and
// FlashAttention's tolerance rule): the sequences' K and V rows are copied into page pools through a block
// table that scatters every sequence's pages over the pool, their Q into one batch; one paged launch computes
// every sequence, and each sequence's rows of O go back to its own AttentionData to be verified there. So a
// wrong page, a wrong length or a wrong split shows as that sequence failing its own reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "attention_case.h"
#include "common/check.h"
#include "expect.h"
#include "gpu.h"
#include "paged_attention/paged_attention.h"
#include "paged_lengths.h"

namespace sb::bench {
namespace {

struct PagedShape {
  int64_t heads_q, heads_kv, head_dim, q_len;
  bool causal;
};

struct RaggedBatch {
  std::vector<std::unique_ptr<AttentionData>> seqs;
  std::vector<int32_t> lens, table;
  int64_t page_size = 0, max_pages = 0, num_pages = 0;
  DeviceBuffer q, o, k_pool, v_pool, d_lens, d_table, workspace;
  paged_attention::Problem problem;
};

// The batch of `lens` sequences of `shape`, pages of page_size, the pool's pages shuffled by `seed`.
RaggedBatch build(const PagedShape& s, DType dtype, const std::vector<int64_t>& lens, int64_t page_size, uint64_t seed,
                  const Stream& stream) {
  RaggedBatch r;
  const auto batch = static_cast<int64_t>(lens.size());
  const std::size_t elem = size_bytes(dtype), row = static_cast<std::size_t>(s.heads_kv * s.head_dim) * elem;
  const std::size_t q_seq = static_cast<std::size_t>(s.q_len * s.heads_q * s.head_dim) * elem;
  r.page_size = page_size;
  for (const int64_t len : lens) r.max_pages = std::max(r.max_pages, (len + page_size - 1) / page_size);
  r.num_pages = batch * r.max_pages + 3;  // spare pages no sequence owns
  std::vector<int32_t> pages(static_cast<std::size_t>(r.num_pages));
  std::iota(pages.begin(), pages.end(), 0);
  std::mt19937 gen(static_cast<unsigned>(seed));
  std::shuffle(pages.begin(), pages.end(), gen);
  r.table.assign(static_cast<std::size_t>(batch * r.max_pages), -1);  // entries past a sequence: never read
  r.q = DeviceBuffer(static_cast<std::size_t>(batch) * q_seq);
  r.o = DeviceBuffer(static_cast<std::size_t>(batch) * q_seq);
  r.k_pool = DeviceBuffer(static_cast<std::size_t>(r.num_pages * page_size) * row);
  r.v_pool = DeviceBuffer(static_cast<std::size_t>(r.num_pages * page_size) * row);
  std::size_t next = 0;
  for (int64_t b = 0; b < batch; ++b) {
    r.lens.push_back(static_cast<int32_t>(lens[b]));
    r.seqs.push_back(std::make_unique<AttentionData>(
        AttentionDims{1, s.heads_q, s.heads_kv, s.head_dim, s.q_len, lens[b], s.causal}, dtype, seed * 131 + b,
        stream.get()));
    const attention::Problem one = r.seqs.back()->problem();
    SB_CUDA_CHECK(cudaMemcpyAsync(r.q.as<char>() + b * q_seq, one.q, q_seq, cudaMemcpyDeviceToDevice, stream.get()));
    for (int64_t j = 0; j * page_size < lens[b]; ++j) {
      const int32_t page = pages[next++];
      r.table[static_cast<std::size_t>(b * r.max_pages + j)] = page;
      const std::size_t rows = static_cast<std::size_t>(std::min(page_size, lens[b] - j * page_size));
      const std::size_t dst = static_cast<std::size_t>(page * page_size) * row;
      const std::size_t src = static_cast<std::size_t>(j * page_size) * row;
      SB_CUDA_CHECK(cudaMemcpyAsync(r.k_pool.as<char>() + dst, static_cast<const char*>(one.k) + src, rows * row,
                                    cudaMemcpyDeviceToDevice, stream.get()));
      SB_CUDA_CHECK(cudaMemcpyAsync(r.v_pool.as<char>() + dst, static_cast<const char*>(one.v) + src, rows * row,
                                    cudaMemcpyDeviceToDevice, stream.get()));
    }
  }
  r.d_lens = DeviceBuffer(r.lens.size() * sizeof(int32_t));
  r.d_table = DeviceBuffer(r.table.size() * sizeof(int32_t));
  SB_CUDA_CHECK(cudaMemcpyAsync(r.d_lens.get(), r.lens.data(), r.d_lens.bytes(), cudaMemcpyHostToDevice, stream.get()));
  SB_CUDA_CHECK(
      cudaMemcpyAsync(r.d_table.get(), r.table.data(), r.d_table.bytes(), cudaMemcpyHostToDevice, stream.get()));
  SB_CUDA_CHECK(cudaMemsetAsync(r.o.get(), 0xff, r.o.bytes(), stream.get()));  // NaN in fp16 and bf16
  stream.sync();
  paged_attention::Problem& p = r.problem;
  p.batch = batch;
  p.heads_q = s.heads_q;
  p.heads_kv = s.heads_kv;
  p.head_dim = s.head_dim;
  p.q_len = s.q_len;
  p.page_size = page_size;
  p.num_pages = r.num_pages;
  p.max_pages = r.max_pages;
  p.causal = s.causal;
  p.dtype = dtype;
  p.seq_lens_host = r.lens.data();
  p.seq_lens = r.d_lens.as<int32_t>();
  p.block_table = r.d_table.as<int32_t>();
  p.q = r.q.get();
  p.k_pages = r.k_pool.get();
  p.v_pages = r.v_pool.get();
  p.o = r.o.get();
  return r;
}

// Runs `v` on the batch (num_splits forced if > 0) and verifies every sequence against its own reference.
void run_and_verify(RaggedBatch& r, const paged_attention::Variant& v, int64_t num_splits, const Stream& stream) {
  r.problem.num_splits = num_splits;
  const std::size_t need = v.workspace_bytes(r.problem);
  if (need) r.workspace = DeviceBuffer(need);
  r.problem.workspace = r.workspace.get();
  r.problem.workspace_size = r.workspace.bytes();
  paged_attention::run(v, r.problem, stream.get());
  const std::size_t q_seq = static_cast<std::size_t>(r.problem.q_len * r.problem.heads_q * r.problem.head_dim) *
                            size_bytes(r.problem.dtype);
  for (std::size_t b = 0; b < r.seqs.size(); ++b) {
    r.seqs[b]->poison_output();
    SB_CUDA_CHECK(cudaMemcpyAsync(r.seqs[b]->problem().o, r.o.as<char>() + b * q_seq, q_seq, cudaMemcpyDeviceToDevice,
                                  stream.get()));
    stream.sync();
    const Check c = r.seqs[b]->verify();
    EXPECT_TRUE(c.ok) << "sequence " << b << " of " << r.lens[b] << " keys: " << c.message;
    EXPECT_LE(c.err, 1.0) << "sequence " << b;
  }
}

const PagedShape kShapes[] = {
    {32, 8, 128, 1, false},  // Llama-3-8B: 4 query rows a kv head
    {64, 8, 128, 1, false},  // Llama-3-70B: 8 rows
    {8, 2, 64, 4, true},     // 4 speculative tokens, bottom-right causal per sequence: 16 rows, 2 row blocks
};

using Param = std::tuple<DType, int, LengthDist, int64_t, int64_t>;  // dtype, shape, lengths, page, splits

class PagedSplitk : public ::testing::TestWithParam<Param> {};

TEST_P(PagedSplitk, EverySequenceMatchesItsReference) {
  SB_REQUIRE_GPU();
  const auto [dtype, shape, dist, page, splits] = GetParam();
  Stream stream;
  const std::vector<int64_t> lens = sequence_lengths(dist, 5, 1500, 3 + page);
  RaggedBatch r = build(kShapes[shape], dtype, lens, page, 17 + page + shape, stream);
  run_and_verify(r, paged_attention::variant("paged_splitk"), splits, stream);
}

INSTANTIATE_TEST_SUITE_P(
    Batches, PagedSplitk,
    ::testing::Combine(::testing::Values(DType::bf16, DType::f16), ::testing::Values(0, 1, 2),
                       ::testing::Values(LengthDist::eq, LengthDist::unif, LengthDist::zipf, LengthDist::onelong),
                       ::testing::Values<int64_t>(16, 64, 256), ::testing::Values<int64_t>(0, 3)),
    [](const ::testing::TestParamInfo<Param>& i) {
      return std::string(name(std::get<0>(i.param))) + "_shape" + std::to_string(std::get<1>(i.param)) + "_" +
             name(std::get<2>(i.param)) + "_p" + std::to_string(std::get<3>(i.param)) + "_splits" +
             std::to_string(std::get<4>(i.param));
    });

// One sequence of one key, and a long one (the heuristic splits it, the short ones stay whole).
TEST(PagedSplitkEdges, OneKeyAndOneLongSequence) {
  SB_REQUIRE_GPU();
  Stream stream;
  RaggedBatch one = build(kShapes[0], DType::bf16, {1}, 16, 5, stream);
  run_and_verify(one, paged_attention::variant("paged_splitk"), 0, stream);
  RaggedBatch mixed = build(kShapes[0], DType::bf16, {33000, 17, 1, 4096}, 64, 6, stream);
  run_and_verify(mixed, paged_attention::variant("paged_splitk"), 0, stream);
}

TEST(PagedSplitkEdges, RefusalsNameTheReason) {
  SB_REQUIRE_GPU();
  Stream stream;
  const auto& v = paged_attention::variant("paged_splitk");
  {
    RaggedBatch r = build({8, 8, 128, 1, false}, DType::bf16, {100, 50}, 16, 1, stream);  // MHA
    test::expect_throw_naming<std::invalid_argument>([&] { paged_attention::run(v, r.problem, stream.get()); },
                                               "FMA kernel, which has no paged form");
  }
  {
    RaggedBatch r = build(kShapes[0], DType::bf16, {100, 50}, 16, 1, stream);
    r.problem.page_size = 8;  // the pool read as pages of 8: refused before any launch
    r.problem.max_pages *= 2;
    test::expect_throw_naming<std::invalid_argument>([&] { paged_attention::run(v, r.problem, stream.get()); },
                                               "not a multiple of 16");
  }
}

}  // namespace
}  // namespace sb::bench
