// GPU tests of paged decode (kernels/paged_attention): ragged batches (bench/paged_case.h: every sequence's
// pages scattered over the pool, every sequence checked against its own fp64 reference) of each length
// distribution and page size, with the plan's splits and 3 forced ones; one key and one long sequence among
// short ones; the refusals through paged_attention::run.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "expect.h"
#include "gpu.h"
#include "paged_attention/paged_attention.h"
#include "paged_case.h"
#include "paged_lengths.h"

namespace sb::bench {
namespace {

// Runs `v` on the batch (num_splits forced if > 0) and verifies every sequence against its own reference.
void run_and_verify(PagedData& data, const paged_attention::Variant& v, int64_t num_splits, const Stream& stream) {
  paged_attention::Problem p = data.problem();
  p.num_splits = num_splits;
  data.reserve_workspace(v.workspace_bytes(p));
  p = data.problem();
  p.num_splits = num_splits;
  paged_attention::run(v, p, stream.get());
  const Check c = data.verify();
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_LE(c.err, 1.0);
}

const PagedDims kShapes[] = {
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
  PagedData data(kShapes[shape], dtype, lens, page, 17 + page + shape, stream.get());
  run_and_verify(data, paged_attention::variant("paged_splitk"), splits, stream);
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
  PagedData one(kShapes[0], DType::bf16, {1}, 16, 5, stream.get());
  run_and_verify(one, paged_attention::variant("paged_splitk"), 0, stream);
  PagedData mixed(kShapes[0], DType::bf16, {33000, 17, 1, 4096}, 64, 6, stream.get());
  run_and_verify(mixed, paged_attention::variant("paged_splitk"), 0, stream);
}

TEST(PagedSplitkEdges, RefusalsNameTheReason) {
  SB_REQUIRE_GPU();
  Stream stream;
  const auto& v = paged_attention::variant("paged_splitk");
  {
    PagedData mha({8, 8, 128, 1, false}, DType::bf16, {100, 50}, 16, 1, stream.get());
    test::expect_throw_naming<std::invalid_argument>([&] { paged_attention::run(v, mha.problem(), stream.get()); },
                                               "FMA kernel, which has no paged form");
  }
  {
    PagedData data(kShapes[0], DType::bf16, {100, 50}, 16, 1, stream.get());
    paged_attention::Problem p = data.problem();
    p.page_size = 8;  // the pool read as pages of 8: refused before any launch
    p.max_pages *= 2;
    test::expect_throw_naming<std::invalid_argument>([&] { paged_attention::run(v, p, stream.get()); },
                                               "not a multiple of 16");
  }
}

}  // namespace
}  // namespace sb::bench
