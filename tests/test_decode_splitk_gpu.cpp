// GPU tests of decode_splitk beyond the registry-wide ones (test_attention_gpu.cpp), against the fp64
// reference with FlashAttention's tolerance rule (bench/attention_case.h): forced split counts 1 to 130
// (130 leaves most chunks empty: lse = -inf, which the combine must ignore), kv_len 1 and lengths that
// are no multiple of a tile, the heuristic's own split counts, speculative tokens with bottom-right
// causal masking (fully masked rows give 0), head dims 64 and 256, MQA (several row blocks), MHA with one
// and two kv heads a block, logits of +-5e5, fp16 with a large softmax scale (the FMA kernel), bit-identical
// repeats, and the refusals through attention::run.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "attention/attention.h"
#include "attention/decode_splitk.h"
#include "attention_case.h"
#include "attention_test.h"
#include "common/check.h"
#include "common/device.h"
#include "expect.h"
#include "gpu.h"

namespace sb::bench {
namespace {

const attention::Variant& splitk() { return attention::variant("decode_splitk"); }

// The problem with `num_splits` forced (0: the heuristic), its workspace reserved first.
attention::Problem prepare(AttentionData& data, int64_t num_splits) {
  attention::Problem p = data.problem();
  p.num_splits = num_splits;
  data.reserve_workspace(splitk().workspace_bytes(p));
  p = data.problem();  // the workspace pointer may have changed
  p.num_splits = num_splits;
  return p;
}

Check run_and_verify(AttentionData& data, int64_t num_splits, const Stream& stream) {
  const attention::Problem p = prepare(data, num_splits);
  data.poison_output();
  attention::run(splitk(), p, stream.get());
  stream.sync();
  return data.verify();
}

// Forced split counts x kv lengths x dtypes, GQA 4:1 (the block computes 4 q heads from one K/V read): 3, 7
// and 8 splits merge in a thread-block cluster (8 = kMaxClusterSplits), 12, 16, 64 and 130 in the combine
// kernel (12 and 16: just past the cluster limit).
using ForcedParam = std::tuple<DType, int64_t, int64_t>;  // dtype, num_splits, kv_len

class DecodeSplitkForced : public ::testing::TestWithParam<ForcedParam> {};

TEST_P(DecodeSplitkForced, MatchesReference) {
  SB_REQUIRE_GPU();
  const auto [dtype, splits, kv_len] = GetParam();
  Stream stream;
  AttentionData data({2, 8, 2, 128, 1, kv_len, false}, dtype, 7 + kv_len, stream.get());
  const Check c = run_and_verify(data, splits, stream);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_LE(c.err, 1.0);
}

INSTANTIATE_TEST_SUITE_P(SplitsAndLengths, DecodeSplitkForced,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16),
                                            ::testing::Values<int64_t>(1, 3, 7, 8, 12, 16, 64, 130),
                                            ::testing::Values<int64_t>(1, 1000, 4097)),
                         [](const ::testing::TestParamInfo<ForcedParam>& i) {
                           return std::string(name(std::get<0>(i.param))) + "_splits" +
                                  std::to_string(std::get<1>(i.param)) + "_kv" + std::to_string(std::get<2>(i.param));
                         });

// Shapes off the main path, each with the heuristic, 3 and 130 splits.
using ShapeParam = std::tuple<DType, AttentionDims, int64_t>;

const AttentionDims kShapes[] = {
    {1, 32, 8, 128, 1, 4096, false},   // the ANCHORS b1 shape: 8 heuristic splits of 512 keys, a cluster
    {1, 32, 8, 128, 1, 32768, false},  // 16 heuristic splits of 2048 keys
    {1, 32, 8, 128, 1, 33000, false},  // 16 splits of 2112 keys: a short last chunk, a partial last tile
    {1, 4, 1, 64, 8, 5, true},         // 8 speculative tokens, kv_len 5: rows 0-2 see no key (output 0)
    {2, 8, 2, 256, 4, 1000, true},     // d256, 4 tokens: 16 rows in 4 row blocks of 4
    {1, 32, 1, 128, 1, 4097, false},   // MQA: 32 rows in 4 row blocks of 8
    {3, 16, 16, 64, 2, 777, false},    // MHA, 2 tokens without a mask: 2 kv heads a block, 2 rows
    {2, 8, 8, 128, 1, 4097, false},    // MHA, one token, d128: 2 kv heads a block, 1 row
    {2, 5, 5, 128, 1, 1000, false},    // MHA with an odd kv head count: 1 kv head a block, 1 row
    {1, 64, 8, 128, 1, 3000, false},   // 8 rows a block (Llama-3-70B)
    {2, 12, 4, 128, 3, 130, true},     // 3 heads x 3 tokens = 9 rows: blocks of 8 and 1
    {16, 32, 8, 128, 1, 1000, false},  // 128 units, no heuristic split: 64 paired clusters, a partial last tile
    {32, 16, 4, 64, 1, 777, false},    // the same at d64
    {32, 16, 16, 128, 1, 100, false},  // MHA, 256 units of 2 kv heads, no heuristic split: 8 blocks a sequence
};

class DecodeSplitkShapes : public ::testing::TestWithParam<ShapeParam> {};

TEST_P(DecodeSplitkShapes, MatchesReference) {
  SB_REQUIRE_GPU();
  const auto [dtype, dims, splits] = GetParam();
  Stream stream;
  AttentionData data(dims, dtype, 11, stream.get());
  const Check c = run_and_verify(data, splits, stream);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_LE(c.err, 1.0);
}

INSTANTIATE_TEST_SUITE_P(Shapes, DecodeSplitkShapes,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16), ::testing::ValuesIn(kShapes),
                                            ::testing::Values<int64_t>(0, 3, 130)),
                         [](const ::testing::TestParamInfo<ShapeParam>& i) {
                           return std::string(name(std::get<0>(i.param))) + "_" + shape_name(std::get<1>(i.param)) +
                                  "_splits" + std::to_string(std::get<2>(i.param));
                         });

// Logits of +-5e5 (bf16: Q ~ N(0, 4e4^2), q.k ~ N(0, 4.5e5^2)) or, in fp16, as large as the dtype's
// own reference can round q.k (Q ~ N(0, 500^2), |q.k| < 65504): the softmax is nearly one-hot and a
// kernel without max subtraction overflows to Inf/NaN. Splits whose keys all lie far below the row's
// max weigh exactly 0 in the combine.
class DecodeSplitkExtreme : public ::testing::TestWithParam<std::tuple<DType, int64_t>> {};

TEST_P(DecodeSplitkExtreme, NoOverflow) {
  SB_REQUIRE_GPU();
  const auto [dtype, splits] = GetParam();
  Stream stream;
  const float q_stddev = dtype == DType::bf16 ? 4e4f : 500.0f;
  AttentionData data({2, 32, 8, 128, 1, 4097, false}, dtype, 5, stream.get(), q_stddev);
  const Check c = run_and_verify(data, splits, stream);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_LE(c.err, 1.0);
}

INSTANTIATE_TEST_SUITE_P(Logits, DecodeSplitkExtreme,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16),
                                            ::testing::Values<int64_t>(0, 1, 7, 130)),
                         [](const ::testing::TestParamInfo<std::tuple<DType, int64_t>>& i) {
                           return std::string(name(std::get<0>(i.param))) + "_splits" +
                                  std::to_string(std::get<1>(i.param));
                         });

// fp16 with a large softmax scale: the tensor-core kernel must scale the fp32 scores, not Q (a scaled Q
// held in fp16 would round |q| x scale x log2 e > 65504 to inf, as a kernel that scales Q before the MMA does unless
// the plan sent this case to the FMA kernel). Q ~ N(0, 1000^2) with scale 40: |q| x 40 x log2 e passes
// 65504 from |q| ~ 1135 on, while |q.k| (std ~11k) stays below fp16's 65504 for the same-dtype reference.
TEST(DecodeSplitk, Fp16LargeScaleStaysFinite) {
  SB_REQUIRE_GPU();
  Stream stream;
  AttentionData data({2, 8, 2, 128, 1, 1000, false}, DType::f16, 13, stream.get(), 1000.0f, 40.0);
  for (int64_t splits : {0, 3}) {
    const Check c = run_and_verify(data, splits, stream);
    EXPECT_TRUE(c.ok) << "num_splits " << splits << ": " << c.message;
    EXPECT_LE(c.err, 1.0);
  }
}

// No atomics anywhere in the reduction: two runs give the same bits, with and without splits.
TEST(DecodeSplitk, RepeatedRunsAreBitIdentical) {
  SB_REQUIRE_GPU();
  Stream stream;
  AttentionData data({2, 32, 8, 128, 1, 32768, false}, DType::bf16, 3, stream.get());
  for (int64_t splits : {0, 1, 130}) {
    const attention::Problem p = prepare(data, splits);
    const std::size_t bytes = p.batch * p.q_len * p.heads_q * p.head_dim * size_bytes(p.dtype);
    std::vector<unsigned char> first(bytes), again(bytes);
    for (auto* out : {&first, &again}) {
      data.poison_output();
      attention::run(splitk(), p, stream.get());
      SB_CUDA_CHECK(cudaMemcpyAsync(out->data(), p.o, bytes, cudaMemcpyDeviceToHost, stream.get()));
      stream.sync();
    }
    EXPECT_EQ(first, again) << "num_splits " << splits;
  }
}

// Unsupported problems are std::invalid_argument from attention::run, naming the reason.
TEST(DecodeSplitk, RefusalsNameTheReason) {
  SB_REQUIRE_GPU();
  test::expect_refusals(splitk(), {
                                      {{1, 32, 8, 128, 9, 64, true}, DType::bf16, "q_len 9"},
                                      {{1, 32, 8, 96, 1, 64, false}, DType::bf16, "head_dim 96"},
                                      {{1, 32, 8, 128, 1, 64, false}, DType::f32, "fp32"},
                                  });
}

// A decode problem of these dimensions with no tensors: the plan, the launch floor and the occupancy query
// read the dimensions only (the floor's kernels touch no memory).
attention::Problem dims_only(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t head_dim, int64_t kv_len,
                             DType dtype, int64_t num_splits = 0) {
  attention::Problem p = problem_of({batch, heads_q, heads_kv, head_dim, 1, kv_len, false}, dtype);
  p.num_splits = num_splits;
  return p;
}

// The cluster plans assume their clusters run at once, in one wave: every b1 GQA plan that clusters, and every
// paired plan, launches at most as many clusters as the GPU holds (cudaOccupancyMaxActiveClusters at the
// kernel's shared memory).
// The count for clusters of 16 is printed too.
TEST(DecodeSplitkLaunch, ClusterPlansFitTheGpuAtOnce) {
  SB_REQUIRE_GPU();
  namespace ds = attention::decode_splitk;
  const int sms = device_sm_count();
  int clustered = 0;
  for (DType dtype : {DType::bf16, DType::f16})
    for (int64_t d : {64, 128})
      for (int64_t kv : {1024, 4096}) {
        const attention::Problem p = dims_only(1, 32, 8, d, kv, dtype);
        const ds::Plan plan = ds::make_plan(p, sms);
        if (!plan.cluster_combine) continue;
        ++clustered;
        const int64_t launched = p.batch * p.heads_kv * plan.row_blocks;
        const int active = ds::max_active_clusters(p, plan.num_splits);
        EXPECT_GE(active, launched) << name(dtype) << " d" << d << " kv" << kv << ": " << launched
                                    << " clusters of " << plan.num_splits << ", the GPU holds " << active;
        std::printf("%s d%lld kv%lld: %lld clusters of %d, held at once %d; clusters of 16 held at once %d\n",
                    std::string(name(dtype)).c_str(), static_cast<long long>(d), static_cast<long long>(kv),
                    static_cast<long long>(launched), plan.num_splits, active, ds::max_active_clusters(p, 16));
      }
  // Paired plans: batch x heads_kv / 2 clusters of 2, one block an SM (the H200 holds 66 pairs, but
  // 30 clusters of 4, not the 32 a 128-block grid needs).
  for (DType dtype : {DType::bf16, DType::f16})
    for (const AttentionDims& dims :
         {AttentionDims{16, 32, 8, 128, 1, 32768, false}, AttentionDims{8, 64, 16, 128, 1, 32768, false},
          AttentionDims{32, 16, 4, 64, 1, 8192, false}, AttentionDims{9, 32, 8, 128, 1, 64, false}}) {
      attention::Problem p = dims_only(dims.batch, dims.heads_q, dims.heads_kv, dims.head_dim, dims.kv_len, dtype, 1);
      const ds::Plan plan = ds::make_plan(p, sms);
      if (!plan.paired_clusters) continue;
      ++clustered;
      const int64_t launched = p.batch * p.heads_kv / ds::kPairBlocks;
      const int active = ds::max_active_clusters(p, ds::kPairBlocks);
      EXPECT_GE(active, launched) << name(dtype) << " " << shape_name(dims) << ": " << launched
                                  << " pairs, the GPU holds " << active;
      std::printf("%s %s: %lld pairs, held at once %d; clusters of 4 held at once %d\n",
                  std::string(name(dtype)).c_str(), shape_name(dims).c_str(), static_cast<long long>(launched), active,
                  ds::max_active_clusters(p, 4));
    }
  if (clustered == 0) GTEST_SKIP() << "no GQA plan clusters on this GPU (" << sms << " SMs): nothing to check";
}

// The launch floor runs each kind of plan's launches: a single split over more than a wave (b64), split +
// combine with PDL (16 splits forced: past the cluster limit), a cluster (b1 KV 4096) and pairs (b16 KV
// 32768), the smaller shared memory first (opt_in_smem raises an opt-in made at a smaller size); it refuses
// the FMA kernel's plans and cluster sizes outside 1-16, naming the reason.
TEST(DecodeSplitkLaunch, FloorLaunchesEveryPlanKind) {
  SB_REQUIRE_GPU();
  namespace ds = attention::decode_splitk;
  Stream stream;
  const int sms = device_sm_count();
  const attention::Problem cluster = dims_only(1, 32, 8, 128, 4096, DType::bf16);
  const attention::Problem combine = dims_only(1, 32, 8, 128, 4096, DType::bf16, 16);
  const attention::Problem single = dims_only(64, 32, 8, 128, 4096, DType::bf16);
  const attention::Problem pairs = dims_only(16, 32, 8, 128, 32768, DType::bf16);
  EXPECT_TRUE(ds::make_plan(cluster, sms).cluster_combine);
  EXPECT_FALSE(ds::make_plan(single, sms).paired_clusters);  // pairs' plan: DecodeSplitkPlan (a CPU test)
  EXPECT_FALSE(ds::make_plan(combine, sms).cluster_combine);
  EXPECT_EQ(ds::make_plan(combine, sms).num_splits, 16);
  EXPECT_EQ(ds::make_plan(single, sms).num_splits, 1);
  for (const attention::Problem& p : {single, combine, cluster, pairs}) {
    ASSERT_EQ(ds::launch_floor_supports(p), "");
    ds::launch_floor(p, stream.get());
    stream.sync();
  }
  // An FMA plan whatever the plan policy: head_dim 256, which the tensor-core kernel never takes (an MHA
  // plan at head_dim <= 128 could move to it).
  const attention::Problem fma = dims_only(1, 32, 32, 256, 4096, DType::bf16);
  ASSERT_FALSE(ds::make_plan(fma, sms).tensor_cores);
  EXPECT_NE(ds::launch_floor_supports(fma).find("tensor-core"), std::string::npos) << ds::launch_floor_supports(fma);
  EXPECT_THROW(ds::launch_floor(fma, stream.get()), std::invalid_argument);
  EXPECT_THROW(ds::max_active_clusters(fma, 8), std::invalid_argument);
  EXPECT_THROW(ds::max_active_clusters(cluster, 0), std::invalid_argument);
  EXPECT_THROW(ds::max_active_clusters(cluster, 17), std::invalid_argument);
}

}  // namespace
}  // namespace sb::bench
