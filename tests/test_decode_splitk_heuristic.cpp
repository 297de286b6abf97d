// CPU tests of decode_splitk's launch plan (kernels/attention/decode_splitk.h): the split heuristic's
// worked examples on an H200 (132 SMs), its invariants over many shapes, forced split counts, the rows
// per block, which problems take the tensor-core kernel, both kernels' shared memory, the workspace size
// and the supports() reasons. No GPU needed.
#include <gtest/gtest.h>

#include "attention/attention.h"
#include "attention/decode_splitk.h"

namespace sb::attention::decode_splitk {
namespace {

constexpr int kH200Sms = 132;
alignas(256) char fake[256];  // never dereferenced

Problem decode(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t head_dim, int64_t kv_len, int64_t q_len = 1) {
  Problem p;
  p.batch = batch;
  p.heads_q = heads_q;
  p.heads_kv = heads_kv;
  p.head_dim = head_dim;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.causal = q_len > 1;
  p.q = p.k = p.v = fake;
  p.o = fake;
  return p;
}

TEST(DecodeSplitkPlan, AnchorShapesOnH200) {
  struct Case {
    int64_t batch, kv_len;
    int splits;
    int64_t chunk_keys;
    bool cluster;
  };
  // 32 q heads / 8 kv heads, d128: 4 rows a block, the tensor-core kernel: tiles of 64 keys, one slot an
  // SM (132 slots).
  const Case cases[] = {
      {1, 1024, 8, 128, true},      // 4 MiB of K and V, 8 units: capped at 8 splits, 64 blocks in 8 clusters
      {1, 4096, 8, 512, true},      // 16 MiB: the worked example's 16 splits, capped at 8 for the cluster
      {1, 16384, 16, 1024, false},  // 64 MiB > kClusterMaxKvBytes: 16 splits and the combine kernel
      {1, 32768, 16, 2048, false},  // 128 blocks, one wave
      {1, 131072, 16, 8192, false},
      {4, 131072, 4, 32768, false}, // 32 units x 4 splits: 128 blocks, more than half the SMs: combine kernel
      {16, 8192, 1, 8192, false},  // 128 blocks >= 0.8 x 132: no split, no combine
      {64, 4096, 1, 4096, false},  // 512 blocks fill the GPU
      {64, 16384, 1, 16384, false},
  };
  for (const Case& c : cases) {
    const Plan plan = make_plan(decode(c.batch, 32, 8, 128, c.kv_len), kH200Sms);
    EXPECT_TRUE(plan.tensor_cores);
    EXPECT_EQ(plan.rows_per_block, 4);
    EXPECT_EQ(plan.row_blocks, 1);
    EXPECT_EQ(plan.tile_keys, kTcTileKeys);
    EXPECT_EQ(plan.blocks_per_sm, 1);
    EXPECT_EQ(plan.num_splits, c.splits) << "batch " << c.batch << " kv " << c.kv_len;
    EXPECT_EQ(plan.chunk_keys, c.chunk_keys) << "batch " << c.batch << " kv " << c.kv_len;
    EXPECT_EQ(plan.cluster_combine, c.cluster) << "batch " << c.batch << " kv " << c.kv_len;
  }
}

// The cluster merge: small tensor-core plans (K + V <= kClusterMaxKvBytes, blocks <= half the SMs) of
// 2 .. kMaxClusterSplits splits, forced or not; their workspace is 0. The FMA kernel (MHA), larger split
// counts, larger K + V and grids over half the SMs keep the partials and the combine kernel.
TEST(DecodeSplitkPlan, ClusterMergeTakesSmallTensorCorePlansUpToEightSplits) {
  Problem p = decode(2, 8, 2, 128, 1000);  // tensor cores, 16 tiles, 4 units, 2 MB of K and V
  for (int splits : {2, 3, 5, 8}) {
    p.num_splits = splits;
    const Plan plan = make_plan(p, kH200Sms);
    EXPECT_TRUE(plan.cluster_combine) << splits;
    EXPECT_EQ(cluster_blocks(plan), splits) << splits;
    EXPECT_EQ(workspace_bytes(plan, p), 0u) << splits;
  }
  for (int splits : {1, 9, 16, 130}) {
    p.num_splits = splits;
    const Plan plan = make_plan(p, kH200Sms);
    EXPECT_FALSE(plan.cluster_combine) << splits;
    EXPECT_EQ(workspace_bytes(plan, p) > 0, splits > 1) << splits;
  }
  Problem mha = decode(1, 32, 32, 128, 4096);  // the FMA kernel: 16 splits by the heuristic, never a cluster
  Plan plan = make_plan(mha, kH200Sms);
  EXPECT_FALSE(plan.tensor_cores);
  EXPECT_FALSE(plan.cluster_combine);
  mha.num_splits = 4;
  EXPECT_FALSE(make_plan(mha, kH200Sms).cluster_combine);
  Problem wide = decode(16, 32, 8, 128, 1024);  // 128 units: 2 splits are 256 blocks, over half the SMs
  wide.num_splits = 2;
  EXPECT_FALSE(make_plan(wide, kH200Sms).cluster_combine);
  Problem big = decode(1, 32, 8, 128, 32768);  // 128 MiB of K and V
  big.num_splits = 8;
  EXPECT_FALSE(make_plan(big, kH200Sms).cluster_combine);
  EXPECT_EQ(cluster_blocks(make_plan(big, kH200Sms)), 0);  // 8 splits and the combine kernel: no clusters
}

// Paired clusters: an unsplit tensor-core grid of one wave over half the SMs (SMs / 2 < units <= SMs rounded
// down to even) with an even heads_kv; never with splits, row blocks past 1 (K and V re-read), an odd heads_kv,
// the FMA kernel, a grid over a wave or one of half the SMs or fewer.
TEST(DecodeSplitkPlan, PairedClustersTakeUnsplitOneWaveTensorCoreGrids) {
  for (int64_t kv : {8192, 32768}) {
    const Plan plan = make_plan(decode(16, 32, 8, 128, kv), kH200Sms);  // 128 units: no split
    EXPECT_EQ(plan.num_splits, 1) << kv;
    EXPECT_TRUE(plan.paired_clusters) << kv;
    EXPECT_FALSE(plan.cluster_combine) << kv;
    EXPECT_EQ(cluster_blocks(plan), kPairBlocks) << kv;
  }
  EXPECT_TRUE(make_plan(decode(8, 64, 16, 128, 32768), kH200Sms).paired_clusters);   // 128 units
  EXPECT_TRUE(make_plan(decode(32, 16, 4, 64, 32768), kH200Sms).paired_clusters);    // d64
  EXPECT_TRUE(make_plan(decode(33, 16, 4, 128, 32768), kH200Sms).paired_clusters);   // 132 units: every SM
  EXPECT_FALSE(make_plan(decode(33, 16, 4, 128, 32768), 131).paired_clusters);       // 132 > 130
  EXPECT_FALSE(make_plan(decode(17, 32, 8, 128, 32768), kH200Sms).paired_clusters);  // 136 units: two waves
  EXPECT_FALSE(make_plan(decode(1, 32, 8, 128, 32768), kH200Sms).paired_clusters);   // 16 splits
  EXPECT_FALSE(make_plan(decode(44, 12, 3, 128, 32768), kH200Sms).paired_clusters);  // 3 kv heads
  EXPECT_FALSE(make_plan(decode(4, 32, 32, 128, 32768), kH200Sms).paired_clusters);  // MHA: the FMA kernel
  Problem forced = decode(9, 32, 8, 128, 4096);  // 72 units, forced unsplit: over half the SMs, paired
  forced.num_splits = 1;
  EXPECT_TRUE(make_plan(forced, kH200Sms).paired_clusters);
  forced.num_splits = 2;
  EXPECT_FALSE(make_plan(forced, kH200Sms).paired_clusters);
  // Half the SMs or fewer: plain (forced unsplit b1 rows, 8 units, run slower paired).
  for (int64_t batch : {1, 8}) {  // 8 and 64 units
    Problem small = decode(batch, 32, 8, 128, 4096);
    small.num_splits = 1;
    EXPECT_FALSE(make_plan(small, kH200Sms).paired_clusters) << batch;
  }
  EXPECT_FALSE(make_plan(decode(1, 32, 8, 128, 64), kH200Sms).paired_clusters);  // one tile, unsplit, 8 units
  const Plan mqa = make_plan(decode(2, 32, 2, 128, 4096, 8), kH200Sms);  // 128 rows a kv head: 16 row blocks
  EXPECT_GT(mqa.row_blocks, 1);
  EXPECT_FALSE(mqa.paired_clusters);
}

TEST(DecodeSplitkPlan, HeuristicIsPure) {
  const Problem p = decode(3, 32, 8, 128, 20000);
  const Plan a = make_plan(p, kH200Sms), b = make_plan(p, kH200Sms);
  EXPECT_EQ(a.num_splits, b.num_splits);
  EXPECT_EQ(a.chunk_keys, b.chunk_keys);
  EXPECT_EQ(num_splits_heuristic(8, 128, 4, 264), 32);
  EXPECT_EQ(num_splits_heuristic(8, 128, 4, 264), num_splits_heuristic(8, 128, 4, 264));
}

TEST(DecodeSplitkPlan, HeuristicEdges) {
  EXPECT_EQ(num_splits_heuristic(212, 1000, 1, 264), 1);  // >= 80% of a wave: no split
  EXPECT_EQ(num_splits_heuristic(1, 1, 1, 264), 1);       // one tile: nothing to split
  EXPECT_EQ(num_splits_heuristic(1, 7, 4, 264), 1);       // less than two minimum chunks
  // One block, unlimited tiles: efficiency s / 264 grows up to the cap of 128; the smallest s within
  // 95% of 128 / 264 is 122.
  EXPECT_EQ(num_splits_heuristic(1, 1 << 20, 1, 264), 122);
  EXPECT_EQ(num_splits_heuristic(0, 10, 1, 264), 1);
  EXPECT_EQ(num_splits_heuristic(1, 10, 1, 0), 1);
}

// Over many shapes and SM counts: the heuristic's chunks cover the keys, none is empty, each is a
// multiple of the tile and at least kMinSplitKeys long (or the whole sequence), and splitting never
// happens once the batch fills 80% of a wave.
TEST(DecodeSplitkPlan, HeuristicInvariants) {
  for (int sms : {1, 16, 108, 132, 170}) {
    for (int64_t batch : {1, 2, 5, 16, 64, 256}) {
      for (auto [hq, hkv] : {std::pair<int64_t, int64_t>{32, 8}, {32, 32}, {64, 8}, {8, 1}, {12, 12}}) {
        for (int64_t d : {64, 128, 256}) {
          for (int64_t kv : {1, 31, 32, 33, 127, 1000, 4097, 65536, 131072, 1 << 20}) {
            for (int64_t q_len : {1, 3, 8}) {
              const Problem p = decode(batch, hq, hkv, d, kv, q_len);
              const Plan plan = make_plan(p, sms);
              SCOPED_TRACE(testing::Message() << "sms " << sms << " b " << batch << " hq " << hq << " hkv " << hkv
                                              << " d " << d << " kv " << kv << " q " << q_len);
              ASSERT_GE(plan.num_splits, 1);
              ASSERT_LE(plan.num_splits, kMaxHeuristicSplits);
              EXPECT_EQ(plan.chunk_keys % plan.tile_keys, 0);
              EXPECT_GE(static_cast<int64_t>(plan.num_splits) * plan.chunk_keys, kv);  // every key covered
              EXPECT_LT(static_cast<int64_t>(plan.num_splits - 1) * plan.chunk_keys, kv);  // no empty chunk
              if (plan.num_splits > 1) {
                EXPECT_GE(plan.chunk_keys, kMinSplitKeys);
              }
              const int64_t units = batch * (hkv / plan.heads_per_block) * plan.row_blocks;
              const bool small = plan.tensor_cores && p.kv_bytes() <= kClusterMaxKvBytes;
              EXPECT_EQ(plan.cluster_combine, small && plan.num_splits > 1 && plan.num_splits <= kMaxClusterSplits &&
                                                  units * plan.num_splits <= sms / 2);
              EXPECT_EQ(plan.paired_clusters, plan.tensor_cores && plan.num_splits == 1 && plan.row_blocks == 1 &&
                                                  hkv % kPairBlocks == 0 && 2 * units > sms && units <= sms / 2 * 2);
              EXPECT_FALSE(plan.paired_clusters && plan.cluster_combine);
              if (small && units * kMaxClusterSplits <= sms / 2) {
                EXPECT_LE(plan.num_splits, kMaxClusterSplits);  // the heuristic's cap for the cluster merge
              }
              const int64_t rows = hq / hkv * q_len;
              // bf16: every GQA row block up to head_dim 128 on tensor cores, with their tile and slot.
              EXPECT_EQ(plan.tensor_cores, plan.rows_per_block >= 2 && plan.heads_per_block == 1 && d <= 128);
              if (plan.tensor_cores) {
                EXPECT_EQ(plan.tile_keys, kTcTileKeys);
                EXPECT_EQ(plan.blocks_per_sm, 1);
              } else {  // the FMA kernel's instantiations stop at kFmaMaxRows
                EXPECT_LE(plan.rows_per_block, kFmaMaxRows);
                EXPECT_EQ(plan.blocks_per_sm, kFmaBlocksPerSm);
              }
              EXPECT_GE(plan.rows_per_block * plan.row_blocks, rows);
              EXPECT_LT(plan.rows_per_block * (plan.row_blocks - 1), rows);
              EXPECT_EQ(hkv % plan.heads_per_block, 0);
              const int64_t blocks = batch * (hkv / plan.heads_per_block) * plan.row_blocks;
              if (blocks >= kNoSplitFill * sms * plan.blocks_per_sm) {
                EXPECT_EQ(plan.num_splits, 1);
              }
            }
          }
        }
      }
    }
  }
}

TEST(DecodeSplitkPlan, ForcedSplitsAreClampedAndMayBeEmpty) {
  Problem p = decode(2, 8, 2, 128, 1000);  // 4 rows a block, tensor cores, tiles of 64 keys: 16 tiles
  p.num_splits = 130;
  Plan plan = make_plan(p, kH200Sms);
  EXPECT_EQ(plan.num_splits, 130);
  EXPECT_EQ(plan.chunk_keys, 64);  // one tile a split: splits 16 .. 129 are empty
  p.num_splits = 7;
  plan = make_plan(p, kH200Sms);
  EXPECT_EQ(plan.num_splits, 7);
  EXPECT_EQ(plan.chunk_keys, 3 * 64);  // ceil(16 / 7) tiles
  p.num_splits = 1;
  plan = make_plan(p, kH200Sms);
  EXPECT_EQ(plan.num_splits, 1);
  EXPECT_EQ(workspace_bytes(plan, p), 0u);
  p.num_splits = 100000;
  EXPECT_EQ(make_plan(p, kH200Sms).num_splits, kMaxSplits);
  p.kv_len = 1;
  p.num_splits = 3;
  plan = make_plan(p, kH200Sms);
  EXPECT_EQ(plan.num_splits, 3);  // split 0 holds the one key; 1 and 2 are empty
  EXPECT_EQ(plan.chunk_keys, 64);
}

TEST(DecodeSplitkPlan, RowsPerBlock) {
  auto rows = [](int64_t hq, int64_t hkv, int64_t d, int64_t q_len) {
    const Plan plan = make_plan(decode(1, hq, hkv, d, 4096, q_len), kH200Sms);
    return std::make_pair(plan.rows_per_block, plan.row_blocks);
  };
  EXPECT_EQ(rows(32, 32, 128, 1), std::make_pair(1, int64_t{1}));  // MHA
  EXPECT_EQ(rows(8, 4, 128, 1), std::make_pair(2, int64_t{1}));
  EXPECT_EQ(rows(32, 8, 128, 1), std::make_pair(4, int64_t{1}));   // Llama-3-8B
  EXPECT_EQ(rows(64, 8, 128, 1), std::make_pair(8, int64_t{1}));   // Llama-3-70B
  EXPECT_EQ(rows(4, 1, 64, 3), std::make_pair(8, int64_t{2}));     // 12 rows: 8 + 4
  EXPECT_EQ(rows(32, 1, 128, 1), std::make_pair(8, int64_t{4}));   // MQA re-reads K and V per 8 rows
  EXPECT_EQ(rows(32, 8, 256, 1), std::make_pair(4, int64_t{1}));
  EXPECT_EQ(rows(64, 8, 256, 1), std::make_pair(4, int64_t{2}));   // d256 stops at 4 rows
  EXPECT_EQ(make_plan(decode(1, 32, 8, 64, 4096), kH200Sms).tile_keys, 64);
  EXPECT_EQ(make_plan(decode(1, 32, 32, 128, 4096), kH200Sms).tile_keys, 16);  // 2 keys a lane, 2 heads a key
  EXPECT_EQ(make_plan(decode(1, 8, 4, 128, 4096), kH200Sms).tile_keys, kTcTileKeys);  // GQA: tensor cores
  EXPECT_EQ(make_plan(decode(1, 16, 8, 256, 4096), kH200Sms).tile_keys, 16);  // FMA, 2 rows: still 2 keys a lane
  EXPECT_EQ(make_plan(decode(1, 32, 8, 256, 4096), kH200Sms).tile_keys, 16);
}

// The FMA kernel: every tile is one 16 KB pipeline stage (256 threads x 2 keys x K and V x 16 B), and the
// pipeline of its resident blocks fits an SM's 227 KB.
TEST(DecodeSplitkPlan, PipelineFitsSharedMemory) {
  for (int rows = 1; rows <= kFmaMaxRows; rows *= 2) {
    EXPECT_EQ(keys_per_lane(rows), 2);
    const int stage_bytes = kThreads * keys_per_lane(rows) * 2 * 16;
    EXPECT_EQ(stage_bytes, 16 * 1024);
    for (int d : {64, 128, 256}) {
      EXPECT_GE(pipeline_stages(rows, d), 3);
      EXPECT_GE(fma_min_blocks(rows, d), kFmaBlocksPerSm);
      EXPECT_LE(pipeline_stages(rows, d) * stage_bytes * fma_min_blocks(rows, d), 227 * 1024)
          << rows << " rows, d" << d;
    }
  }
  for (int64_t d : {64, 128, 256})  // FMA (MHA, odd heads: one head a block): tile_keys x head_dim x 2 B x (K, V)
    EXPECT_EQ(make_plan(decode(1, 3, 3, d, 4096), kH200Sms).tile_keys * d * 2 * 2, 16 * 1024) << "d" << d;
}

// The FMA kernel's residency: one-row blocks at head_dim <= 128 (MHA decode at q_len 1) ask
// ptxas for 4 blocks an SM of 3 stages (<= 64 registers); more rows or head_dim 256 keep 2+ blocks of 4
// stages (they would spill at 64). The heuristic counts kFmaBlocksPerSm slots for all of them.
TEST(DecodeSplitkPlan, FmaResidencyFollowsRowsAndHeadDim) {
  for (int d : {64, 128}) {
    EXPECT_EQ(fma_min_blocks(1, d), 4) << "d" << d;
    EXPECT_EQ(pipeline_stages(1, d), 3) << "d" << d;
    for (int rows : {2, 4}) {
      EXPECT_EQ(fma_min_blocks(rows, d), kFmaBlocksPerSm) << rows << " rows, d" << d;
      EXPECT_EQ(pipeline_stages(rows, d), 4) << rows << " rows, d" << d;
    }
  }
  for (int rows : {1, 2, 4}) EXPECT_EQ(fma_min_blocks(rows, 256), kFmaBlocksPerSm) << rows << " rows, d256";
  // The plan of MHA b64 KV 4096 (the shape the change was measured on) still counts 2 slots an SM.
  EXPECT_EQ(make_plan(decode(64, 32, 32, 128, 4096), kH200Sms).blocks_per_sm, kFmaBlocksPerSm);
}

// The tensor-core kernel: 96 KB of K and V stages a block at both head dims (3 stages of 8 KB a warp at
// d128, 6 of 4 KB at d64), plus Q (16 padded rows), and two blocks fit an SM's 228 KB (1 KB reserved and
// at most 256 B of static shared memory a block).
TEST(DecodeSplitkPlan, TensorCorePipelineFitsSharedMemory) {
  for (int d : {64, 128}) {
    EXPECT_EQ(kTcThreads / 32 * tc_stages(d) * tc_warp_stage_bytes(d), 96 * 1024) << "d" << d;
    EXPECT_EQ(tc_smem_bytes(d), 96 * 1024 + 16 * d * 2) << "d" << d;
    EXPECT_LE(2 * (tc_smem_bytes(d) + 1024 + 256), 228 * 1024) << "d" << d;
  }
  EXPECT_EQ(tc_smem_bytes(128), 110592 - 2 * 16 * 128 * 2);  // Nsight Compute's figure for cuDNN's block, less two Q parts
  EXPECT_EQ(kTcTileKeys, 64);
}

// The tensor-core kernel scales the fp32 scores, not Q, so the dtype and the softmax scale do not choose
// the kernel (a kernel holding the scaled Q in 16-bit parts, and fp16 with scale x log2 e > 1 took
// the FMA kernel): GQA row blocks at head_dim <= 128 take it; MHA head pairs and head_dim 256 do not.
TEST(DecodeSplitkPlan, TensorCoresForEveryGqaRowBlockUpToD128) {
  for (DType t : {DType::bf16, DType::f16})
    for (double scale : {0.0, 1.001 / kLog2e, 40.0}) {
      Problem p = decode(2, 8, 2, 128, 1000);
      p.dtype = t;
      p.scale = scale;
      const Plan plan = make_plan(p, kH200Sms);
      EXPECT_TRUE(plan.tensor_cores) << name(t) << " scale " << scale;
      EXPECT_EQ(plan.tile_keys, kTcTileKeys);
      EXPECT_EQ(plan.blocks_per_sm, 1);
    }
  EXPECT_FALSE(make_plan(decode(1, 32, 32, 128, 4096), kH200Sms).tensor_cores);  // MHA: kv head pairs
  EXPECT_FALSE(make_plan(decode(1, 32, 8, 256, 4096), kH200Sms).tensor_cores);   // head_dim 256
}

// MHA with 1-2 query tokens, an even kv head count and head_dim <= 128 pairs kv heads; everything else
// computes one kv head a block.
TEST(DecodeSplitkPlan, PairsMhaHeads) {
  const Plan mha = make_plan(decode(1, 32, 32, 128, 4096), kH200Sms);
  EXPECT_EQ(mha.heads_per_block, 2);
  EXPECT_EQ(mha.rows_per_block, 1);
  EXPECT_EQ(mha.tile_keys, 16);  // still one 16 KB stage: 16 keys x 2 heads x 256 B x (K, V)
  EXPECT_EQ(make_plan(decode(3, 16, 16, 64, 777, 2), kH200Sms).heads_per_block, 2);
  EXPECT_EQ(make_plan(decode(3, 16, 16, 64, 777, 2), kH200Sms).tile_keys, 32);
  EXPECT_EQ(make_plan(decode(1, 12, 12, 128, 4096, 3), kH200Sms).heads_per_block, 1);  // 3 tokens
  EXPECT_EQ(make_plan(decode(1, 12, 12, 128, 4096), kH200Sms).heads_per_block, 2);
  EXPECT_EQ(make_plan(decode(1, 3, 3, 128, 4096), kH200Sms).heads_per_block, 1);      // odd heads
  EXPECT_EQ(make_plan(decode(1, 32, 32, 256, 4096), kH200Sms).heads_per_block, 1);    // d256
  EXPECT_EQ(make_plan(decode(1, 32, 8, 128, 4096), kH200Sms).heads_per_block, 1);     // GQA
  EXPECT_EQ(make_plan(decode(1, 8, 4, 128, 4096), kH200Sms).heads_per_block, 1);      // GQA, 2 rows
  // The split heuristic counts pairs: b64 h32 KV 16384 = 1024 blocks (no split); b1 h32 KV 4096 =
  // 16 blocks over 256 tiles of 16 keys, minimum 8 tiles a split: 16 splits fill 256 of 264 slots.
  EXPECT_EQ(make_plan(decode(64, 32, 32, 128, 16384), kH200Sms).num_splits, 1);
  EXPECT_EQ(mha.num_splits, 16);
  EXPECT_EQ(mha.chunk_keys, 256);
}

TEST(DecodeSplitkPlan, WorkspaceHoldsEveryPartial) {
  Problem p = decode(3, 32, 8, 128, 5000, 2);
  p.num_splits = 9;
  const Plan plan = make_plan(p, kH200Sms);
  const std::size_t partials = 3 * 2 * 32 * 9;
  const std::size_t o_bytes = (partials * 128 * 4 + 255) / 256 * 256, lse_bytes = (partials * 4 + 255) / 256 * 256;
  EXPECT_EQ(workspace_bytes(plan, p), o_bytes + lse_bytes);
}

TEST(DecodeSplitkSupports, ReasonsNameTheLimit) {
  const Variant v = variant("decode_splitk");  // a copy: GCC 13 -Wdangling-reference flags a reference here
  Problem p = decode(1, 32, 8, 128, 4096);
  EXPECT_EQ(v.supports(p), "");
  p.q_len = 8;
  EXPECT_EQ(v.supports(p), "");
  p.q_len = 9;
  EXPECT_NE(v.supports(p).find("q_len 9"), std::string::npos) << v.supports(p);
  p = decode(1, 32, 8, 96, 4096);
  EXPECT_NE(v.supports(p).find("head_dim 96"), std::string::npos) << v.supports(p);
  p = decode(1, 32, 8, 128, 4096);
  p.dtype = DType::f32;
  EXPECT_NE(v.supports(p).find("fp32"), std::string::npos) << v.supports(p);
  p = decode(1, 32, 8, 128, 4096);
  p.k = fake + 2;
  EXPECT_NE(v.supports(p).find("16-byte"), std::string::npos) << v.supports(p);
  for (DType t : {DType::f16, DType::bf16})
    for (int64_t d : {64, 128, 256}) {
      p = decode(2, 4, 1, d, 33, 3);
      p.dtype = t;
      EXPECT_EQ(v.supports(p), "") << name(t) << " d" << d;
    }
}

}  // namespace
}  // namespace sb::attention::decode_splitk
