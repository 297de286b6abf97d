// Paged decode's pure parts: the problem's checks and denominators, the split plan, the length
// distributions and the gathering reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "paged_attention/paged_attention.h"
#include "paged_attention/plan.h"
#include "harness/cli.h"
#include "paged_lengths.h"
#include "paged_shapes.h"
#include "ref/cpu/attention_ref.h"
#include "ref/cpu/paged_attention_ref.h"

namespace {

using sb::DType;
using sb::bench::LengthDist;
using sb::bench::sequence_lengths;

// plan_splits over a batch's lengths as the problem holds them (int32, on the host).
sb::paged_attention::SplitPlan plan_splits(const std::vector<int64_t>& lens, int64_t units, int64_t tile,
                                           int64_t slots, int64_t min_chunk, int64_t forced = 0) {
  const std::vector<int32_t> lens32(lens.begin(), lens.end());
  return sb::paged_attention::plan_splits(lens32.data(), static_cast<int64_t>(lens32.size()), units, tile, slots,
                                          min_chunk, forced);
}

using sb::paged_attention::Problem;

struct Problem3 {
  std::vector<int32_t> lens = {5, 17, 64};
  int dummy = 0;
  Problem p;
  Problem3() {
    p.batch = 3;
    p.heads_q = 8;
    p.heads_kv = 2;
    p.head_dim = 64;
    p.q_len = 1;
    p.page_size = 16;
    p.num_pages = 12;
    p.max_pages = 4;
    p.seq_lens_host = lens.data();
    p.seq_lens = lens.data();
    p.block_table = lens.data();
    p.q = p.k_pages = p.v_pages = &dummy;
    p.o = &dummy;
  }
};

TEST(PagedProblem, BytesCountEachSequencesOwnKeysOnce) {
  Problem3 t;
  t.p.validate();
  EXPECT_EQ(t.p.total_keys(), 86);
  EXPECT_EQ(t.p.max_seq_len(), 64);
  EXPECT_EQ(t.p.kv_bytes(), 2u * 86 * 2 * 64 * 2);              // K and V, 2 kv heads, bf16
  EXPECT_EQ(t.p.bytes(), t.p.kv_bytes() + 2u * 3 * 1 * 8 * 64 * 2);  // + Q and O
  EXPECT_DOUBLE_EQ(t.p.flops(), 4.0 * 64 * 8 * 86);
  t.p.q_len = 4;  // causal, bottom-right: row i of a sequence of len keys sees len - 3 + i
  EXPECT_EQ(t.p.unmasked_pairs(), (2 + 3 + 4 + 5) + (14 + 15 + 16 + 17) + (61 + 62 + 63 + 64));
  t.p.causal = false;
  EXPECT_EQ(t.p.unmasked_pairs(), 4 * 86);
}

TEST(PagedProblem, AnFp8CacheCountsOneByteAnElement) {
  Problem3 t;
  t.p.kv_cache = sb::paged_attention::KvCache::fp8_e4m3;
  t.p.validate();
  EXPECT_EQ(t.p.kv_element_bytes(), 1u);
  EXPECT_EQ(t.p.kv_bytes(), 2u * 86 * 2 * 64);                       // K and V in e4m3
  EXPECT_EQ(t.p.bytes(), t.p.kv_bytes() + 2u * 3 * 1 * 8 * 64 * 2);  // Q and O stay bf16
}

TEST(PagedProblem, ValidateNamesTheField) {
  auto expect_error = [](auto mutate, const char* needle) {
    Problem3 t;
    mutate(t);
    try {
      t.p.validate();
      ADD_FAILURE() << "no error for " << needle;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error([](Problem3& t) { t.p.page_size = 0; }, "page_size must be >= 1");
  expect_error([](Problem3& t) { t.p.heads_kv = 3; }, "heads_q (8) must be a multiple of heads_kv (3)");
  expect_error([](Problem3& t) { t.p.q_len = 9; }, "q_len must be at most 8");
  expect_error([](Problem3& t) { t.lens[1] = 65; }, "seq_lens[1] must be in [1, max_pages * page_size = 64], got 65");
  expect_error([](Problem3& t) { t.lens[2] = 0; }, "seq_lens[2] must be in [1");
  expect_error([](Problem3& t) { t.p.block_table = nullptr; }, "block_table is null");
  expect_error([](Problem3& t) { t.p.seq_lens_host = nullptr; }, "seq_lens_host is null");
  expect_error([](Problem3& t) { t.p.scale = -1; }, "scale must be finite");
  auto fp8 = [](float k_scale, float v_scale) {
    return [=](Problem3& t) {
      t.p.kv_cache = sb::paged_attention::KvCache::fp8_e4m3;
      t.p.k_scale = k_scale;
      t.p.v_scale = v_scale;
    };
  };
  expect_error(fp8(0.0f, 1.0f), "k_scale must be finite and > 0 for an FP8 cache, got 0");
  expect_error(fp8(1.0f, std::nanf("")), "v_scale must be finite and > 0 for an FP8 cache");
  expect_error([](Problem3& t) { t.p.kv_cache = static_cast<sb::paged_attention::KvCache>(7); },
               "kv_cache: unsupported value 7");
}

TEST(PagedRegistry, PagedSplitkRefusesWhatItsKernelCannotRun) {
  ASSERT_EQ(sb::paged_attention::variants().size(), 1u);
  const auto& v = sb::paged_attention::variant("paged_splitk");
  EXPECT_THROW(sb::paged_attention::variant("nope"), std::invalid_argument);
  alignas(16) static char buffer[64];
  auto refusal = [&](auto mutate) {
    Problem3 t;
    t.p.q = t.p.k_pages = t.p.v_pages = buffer;
    t.p.o = buffer;
    mutate(t.p);
    t.p.validate();
    return v.supports(t.p);
  };
  EXPECT_EQ(refusal([](Problem&) {}), "");  // GQA 4:1, head_dim 64, pages of 16
  EXPECT_NE(refusal([](Problem& p) { p.dtype = DType::f32; }).find("fp32 is not supported"), std::string::npos);
  EXPECT_NE(refusal([](Problem& p) { p.head_dim = 256; }).find("head_dim 256"), std::string::npos);
  EXPECT_NE(refusal([](Problem& p) { p.heads_kv = 8; }).find("no paged form"), std::string::npos);  // MHA
  EXPECT_NE(refusal([](Problem& p) { p.page_size = 8; p.max_pages = 8; }).find("not a multiple of 16"),
            std::string::npos);
  EXPECT_NE(refusal([](Problem& p) { p.k_pages = buffer + 8; }).find("k_pages is not 16-byte aligned"),
            std::string::npos);
}

// decode_splitk's shapes on 132 SMs, one tensor-core block an SM (tile 64, at least 128 keys a chunk).
TEST(PagedPlan, OneSequenceFillsOneWaveAsDecodeSplitkDoes) {
  const auto p = plan_splits({4096}, 8, 64, 132, 128);
  EXPECT_EQ(p.chunk_keys, 256);  // 16 splits x 8 kv heads = 128 blocks: one wave
  EXPECT_EQ(p.max_splits, 16);
  EXPECT_EQ(p.blocks, 128);
}

TEST(PagedPlan, ABatchThatFillsTheGpuKeepsWholeSequences) {
  const auto p = plan_splits(std::vector<int64_t>(16, 8192), 8, 64, 132, 128);
  EXPECT_EQ(p.chunk_keys, 8192);
  EXPECT_EQ(p.max_splits, 1);
  EXPECT_EQ(p.blocks, 128);
}

TEST(PagedPlan, JustOverOneWaveIsCutToFillWaves) {
  // 140 equal blocks on 132 slots: whole sequences take two waves (2 L); chunks of L / 16 make 17 waves of
  // L / 16 (1.0625 L), within 5% of the best; L / 8 (9 waves, 1.125 L) is not.
  const auto p = plan_splits(std::vector<int64_t>(140, 4096), 1, 64, 132, 128);
  EXPECT_EQ(p.chunk_keys, 256);
  EXPECT_EQ(p.blocks, 140 * 16);
}

TEST(PagedPlan, ALongTailCutsOnlyTheLongSequences) {
  const auto lens = sequence_lengths(LengthDist::zipf, 64, 32768);
  const auto p = plan_splits(lens, 8, 64, 132, 128);
  const int64_t total = std::accumulate(lens.begin(), lens.end(), int64_t{0});
  const double fair = 8.0 * static_cast<double>(total) / 132;
  EXPECT_LE(static_cast<double>(p.chunk_keys), fair * sb::paged_attention::kMakespanSlack);
  EXPECT_GT(p.chunk_keys * 2, static_cast<int64_t>(fair / 2));  // about a slot's share, not far below
  EXPECT_GT(p.max_splits, 1);
  int64_t blocks = 0;
  for (const int64_t len : lens) blocks += 8 * ((len + p.chunk_keys - 1) / p.chunk_keys);
  EXPECT_EQ(p.blocks, blocks);
}

TEST(PagedPlan, ForcedSplitsAndBadInput) {
  const auto p = plan_splits({1000, 10}, 2, 64, 132, 128, 3);
  EXPECT_EQ(p.chunk_keys, 384);  // ceil(1000 / 3) = 334, up to the tile
  EXPECT_EQ(p.max_splits, 3);
  EXPECT_EQ(p.blocks, 2 * (3 + 1));
  EXPECT_THROW(plan_splits({}, 1, 64, 132, 128), std::invalid_argument);
  EXPECT_THROW(plan_splits({5, 0}, 1, 64, 132, 128), std::invalid_argument);
  EXPECT_THROW(plan_splits({5}, 1, 0, 132, 128), std::invalid_argument);
}

TEST(PagedLengths, DistributionsAreDeterministicAndBounded) {
  for (LengthDist d : {LengthDist::eq, LengthDist::unif, LengthDist::zipf, LengthDist::onelong}) {
    const auto lens = sequence_lengths(d, 64, 32768, 7);
    EXPECT_EQ(lens, sequence_lengths(d, 64, 32768, 7)) << name(d);
    EXPECT_EQ(*std::max_element(lens.begin(), lens.end()), 32768) << name(d);
    EXPECT_GE(*std::min_element(lens.begin(), lens.end()), 1) << name(d);
    EXPECT_EQ(sb::bench::parse_length_dist(name(d)), d);
  }
  const auto mean = [](const std::vector<int64_t>& v) {
    return static_cast<double>(std::accumulate(v.begin(), v.end(), int64_t{0})) / static_cast<double>(v.size());
  };
  EXPECT_NEAR(mean(sequence_lengths(LengthDist::unif, 4096, 32768)) / 32768, 0.5, 0.02);
  EXPECT_NEAR(mean(sequence_lengths(LengthDist::zipf, 64, 32768)) / 32768, 4.74 / 64, 0.005);  // H_64 / 64
  const auto one = sequence_lengths(LengthDist::onelong, 64, 32768);
  EXPECT_EQ(std::count(one.begin(), one.end(), 32768), 1);
  EXPECT_EQ(std::count(one.begin(), one.end(), 512), 63);
  EXPECT_THROW(sb::bench::parse_length_dist("normal"), std::invalid_argument);
  EXPECT_THROW(sequence_lengths(LengthDist::eq, 0, 5), std::invalid_argument);
}

TEST(PagedShapes, NamesRoundTripAndBadItemsAreUsageErrors) {
  using sb::bench::parse_paged_shapes;
  using sb::bench::UsageError;
  const auto one = parse_paged_shapes("b64_hq32_hkv8_d128_q1_kv16384_p16_zipf");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].dims.batch, 64);
  EXPECT_EQ(one[0].dims.kv_len, 16384);
  EXPECT_EQ(one[0].page_size, 16);
  EXPECT_EQ(one[0].dist, LengthDist::zipf);
  EXPECT_EQ(one[0].name(), "b64_hq32_hkv8_d128_q1_kv16384_p16_zipf");
  EXPECT_EQ(one[0].lengths(), sequence_lengths(LengthDist::zipf, 64, 16384, 1));
  const auto spec = parse_paged_shapes("b3_hq8_hkv2_d64_q4_kv100_causal_p64_onelong")[0];
  EXPECT_TRUE(spec.dims.causal);
  EXPECT_EQ(spec.dims.q_len, 4);
  const auto fp8 = parse_paged_shapes("b64_hq32_hkv8_d128_q1_kv16384_p16_zipf_fp8");
  ASSERT_EQ(fp8.size(), 1u);
  EXPECT_TRUE(fp8[0].fp8);
  EXPECT_FALSE(one[0].fp8);
  EXPECT_EQ(fp8[0].kv_cache(), sb::paged_attention::KvCache::fp8_e4m3);
  EXPECT_EQ(fp8[0].lengths(), one[0].lengths());  // its 16-bit twin's
  EXPECT_FALSE(fp8[0] == one[0]);
  EXPECT_EQ(fp8[0].name(), "b64_hq32_hkv8_d128_q1_kv16384_p16_zipf_fp8");
  EXPECT_EQ(sb::bench::useful_work(fp8[0], DType::bf16).first, sb::bench::useful_work(one[0], DType::bf16).first / 2);
  const auto set = parse_paged_shapes("paged");
  EXPECT_EQ(set.size(), 39u);  // 24 + 6 a page a sequence + the long-context batch + 8 FP8 caches
  EXPECT_EQ(std::count_if(set.begin(), set.end(), [](const auto& s) { return s.page_size == s.dims.kv_len; }), 6);
  EXPECT_EQ(std::count_if(set.begin(), set.end(), [](const auto& s) { return s.fp8; }), 8);
  for (const auto& s : set) EXPECT_EQ(parse_paged_shapes(s.name())[0], s) << s.name();
  for (const char* bad : {"b1_hq32_hkv8_d128_q1_kv4096", "b1_hq32_hkv8_d128_q1_kv4096_p16_normal",
                          "b1_hq32_hkv8_d128_q1_kv4096_p16_eq_fp16", "b1_hq32_hkv8_d128_q1_kv4096_fp8",
                          "b1_hq32_hkv8_d128_q1_kv4096_p0_eq", "b1_hq32_hkv8_d128_q1_kv4096_px_eq",
                          "b1_hq32_hkv8_d128_q16_kv4096_p16_eq", "b1_hq32_hkv8_d128_q64_kv64_p16_eq", "paged2"})
    EXPECT_THROW(parse_paged_shapes(bad), UsageError) << bad;
}

// The paged reference on scattered pages equals the dense reference on the same keys laid out contiguously.
TEST(PagedReference, ScatteredPagesGiveTheContiguousResult) {
  const int64_t hq = 4, hkv = 2, d = 8, q_len = 2, page = 4, max_pages = 5, batch = 2;
  const std::vector<int64_t> lens = {17, 6};
  const int64_t num_pages = batch * max_pages;
  std::mt19937 gen(3);
  std::normal_distribution<double> normal;
  std::vector<double> kpool(num_pages * page * hkv * d), vpool(kpool.size()), q(batch * q_len * hq * d);
  for (auto* v : {&kpool, &vpool, &q})
    for (double& x : *v) x = normal(gen);
  std::vector<int32_t> table(batch * max_pages);
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), gen);  // each sequence's pages anywhere in the pool
  const sb::ref::PagedRefShape s{hq, hkv, d, q_len, page, max_pages, true, 0.3};
  for (int64_t b = 0; b < batch; ++b) {
    const auto k = sb::ref::gather_sequence(s, kpool.data(), num_pages, table.data(), b, lens[b]);
    const auto v = sb::ref::gather_sequence(s, vpool.data(), num_pages, table.data(), b, lens[b]);
    for (int64_t t = 0; t < lens[b]; ++t)  // token t is row t % page of page table[b][t / page]
      for (int64_t i = 0; i < hkv * d; ++i)
        ASSERT_EQ(k[t * hkv * d + i], kpool[(table[b * max_pages + t / page] * page + t % page) * hkv * d + i]);
    const sb::ref::AttentionRefShape dense{1, hq, hkv, d, q_len, lens[b], true, 0.3};
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < q_len; ++i) {
        std::vector<double> got(d), want(d);
        sb::ref::paged_attention_row(s, q.data(), k.data(), v.data(), b, lens[b], h, i, got.data());
        sb::ref::attention_row(dense, q.data() + b * q_len * hq * d, k.data(), v.data(), 0, h, i, want.data());
        EXPECT_EQ(got, want);
      }
  }
  std::vector<int32_t> bad = table;
  bad[3] = static_cast<int32_t>(num_pages);
  EXPECT_THROW(sb::ref::gather_sequence(s, kpool.data(), num_pages, bad.data(), 0, 17), std::invalid_argument);
}

}  // namespace
