// GPU tests of paged decode (kernels/paged_attention): ragged batches (bench/paged_case.h: every sequence's
// pages scattered over the pool, every sequence checked against its own fp64 reference) of each length
// distribution and page size, with the plan's splits and 3 forced ones; the same over an FP8 (e4m3) cache, and
// the widening of every e4m3 byte on the device; one key and one long sequence among short ones; the refusals
// through paged_attention::run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "common/fp8_bits.h"
#include "expect.h"
#include "fp8_probe.h"
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

std::string batch_name(const ::testing::TestParamInfo<Param>& i) {
  return std::string(name(std::get<0>(i.param))) + "_shape" + std::to_string(std::get<1>(i.param)) + "_" +
         name(std::get<2>(i.param)) + "_p" + std::to_string(std::get<3>(i.param)) + "_splits" +
         std::to_string(std::get<4>(i.param));
}

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
    batch_name);

// An FP8 cache: each sequence's K and V rounded through e4m3 at the bench's scales, the pools holding the e4m3
// bytes, each sequence against the fp64 reference of the values the cache holds (FlashAttention's rule against
// the same-dtype computation on them).
class PagedSplitkFp8 : public ::testing::TestWithParam<Param> {};

TEST_P(PagedSplitkFp8, EverySequenceMatchesTheReferenceOfItsCache) {
  SB_REQUIRE_GPU();
  const auto [dtype, shape, dist, page, splits] = GetParam();
  Stream stream;
  const std::vector<int64_t> lens = sequence_lengths(dist, 5, 1500, 3 + page);
  PagedData data(kShapes[shape], dtype, lens, page, 29 + page + shape, stream.get(),
                 paged_attention::KvCache::fp8_e4m3);
  run_and_verify(data, paged_attention::variant("paged_splitk"), splits, stream);
  const Check read = data.check_kv_read();  // the read floor reads the e4m3 bytes the sequences own
  EXPECT_TRUE(read.ok) << read.message;
}

INSTANTIATE_TEST_SUITE_P(
    Batches, PagedSplitkFp8,
    ::testing::Combine(::testing::Values(DType::bf16, DType::f16), ::testing::Values(0, 1, 2),
                       ::testing::Values(LengthDist::eq, LengthDist::zipf), ::testing::Values<int64_t>(16, 64),
                       ::testing::Values<int64_t>(0, 3)),
    batch_name);

double fp16_value(uint16_t bits) {
  const int e = (bits >> 10) & 31, m = bits & 1023;
  const double magnitude = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return bits >> 15 ? -magnitude : magnitude;
}

// What the FP8 cache costs in accuracy, stated in the 16-bit kernel's terms: the FP8 output against the fp64
// reference of the unquantized inputs (the 16-bit twin: same seed, no rounding through e4m3), as a multiple of
// FlashAttention's tolerance there (2 x the same-dtype error + 1e-5), beside the 16-bit kernel's own multiple.
// e4m3 keeps 3 mantissa bits to bf16's 7 and fp16's 10: each K and V element is off by up to 2^-4 of itself, and
// the output, a weighted mean, by less. The same computation modelled in fp64 on the CPU (these lengths, Q, K, V
// ~ N(0, 1), the suite's scales) puts the FP8 output at 2-3.5x the bf16 tolerance and 20-26x the fp16 one (fp16's
// is 8x tighter); the bounds, 16x and 128x, leave room for the sequences' spread and fail a kernel that loses
// more than the quantization does (a wrong scale, a dropped tile).
TEST(PagedSplitkFp8Accuracy, TheQuantizationErrorInUnitsOfTheDtypesTolerance) {
  SB_REQUIRE_GPU();
  Stream stream;
  const auto& v = paged_attention::variant("paged_splitk");
  for (const DType dtype : {DType::bf16, DType::f16}) {
    const std::vector<int64_t> lens = sequence_lengths(LengthDist::unif, 6, 3000, 11);
    PagedData exact(kShapes[0], dtype, lens, 16, 41, stream.get());
    PagedData fp8(kShapes[0], dtype, lens, 16, 41, stream.get(), paged_attention::KvCache::fp8_e4m3);
    run_and_verify(exact, v, 0, stream);
    run_and_verify(fp8, v, 0, stream);  // right for the values its cache holds
    const Check exact_err = exact.verify();
    const Check fp8_err = exact.verify_output(fp8.output());
    RecordProperty(std::string(name(dtype)) + "_fp8_err_over_tolerance", std::to_string(fp8_err.err));
    std::printf("%s: FP8 cache %.1fx the tolerance of the unquantized reference, the %s cache %.2fx\n",
                std::string(name(dtype)).c_str(), fp8_err.err, std::string(name(dtype)).c_str(), exact_err.err);
    EXPECT_LE(exact_err.err, 1.0);
    EXPECT_GT(fp8_err.err, exact_err.err) << "an FP8 cache cannot be more accurate than the unquantized one";
    EXPECT_LT(fp8_err.err, dtype == DType::bf16 ? 16.0 : 128.0) << fp8_err.message;
  }
}

// Every e4m3 byte, in both places of a pair and beside every other byte, widened on the device: the value the
// host decodes (fp8_bits.h), exactly; NaN stays NaN in fp16 and reads as +-480 in bf16.
TEST(Fp8Widening, EveryByteIsItsValue) {
  SB_REQUIRE_GPU();
  std::vector<uint8_t> bytes;
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) {
      bytes.push_back(static_cast<uint8_t>(a));
      bytes.push_back(static_cast<uint8_t>(b));
    }
  for (const bool bf16 : {true, false}) {
    const std::vector<uint16_t> got = test::widen_e4m3_on_device(bytes, bf16);
    ASSERT_EQ(got.size(), bytes.size());
    int wrong = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      const double want = e4m3_value(bytes[i]);
      double value;
      if (bf16) {
        const uint32_t f = static_cast<uint32_t>(got[i]) << 16;
        float v;
        std::memcpy(&v, &f, sizeof v);
        value = v;
      } else {
        value = fp16_value(got[i]);
      }
      const bool ok = std::isnan(want) ? (bf16 ? std::fabs(value) == 480.0 : std::isnan(value)) : value == want;
      if (!ok && wrong++ < 5)
        ADD_FAILURE() << (bf16 ? "bf16" : "fp16") << ": byte 0x" << std::hex << int{bytes[i]} << " at " << std::dec
                      << i << " widened to " << value << ", its value is " << want;
    }
    EXPECT_EQ(wrong, 0) << (bf16 ? "bf16" : "fp16");
  }
}

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
