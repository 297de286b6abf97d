// CPU tests of the RMSNorm problem: validation messages, byte/FLOP formulas, the vectorized variant's
// launch geometry. run() validates before it touches the GPU, so bad problems are testable here.
#include <gtest/gtest.h>

#include "expect.h"
#include "rmsnorm/rmsnorm.h"
#include "rmsnorm_shapes.h"

namespace sb::rmsnorm {

// gtest prints a failed regime by name.
void PrintTo(VectorizedRegime r, std::ostream* os) {
  static const char* const kNames[] = {"decode", "latency", "bandwidth", "two_pass"};
  *os << kNames[static_cast<int>(r)];
}

namespace {

alignas(16) char fake_x[64], fake_w[64], fake_y[64];  // never dereferenced: validation fails first

Problem valid() {
  Problem p;
  p.rows = 4;
  p.hidden = 8;
  p.dtype = DType::bf16;
  p.x = fake_x;
  p.w = fake_w;
  p.y = fake_y;
  return p;
}

void expect_invalid(const Problem& p, const std::string& field) {
  test::expect_throw_naming<std::invalid_argument>([&] { p.validate(); }, field);
  for (const Variant& v : variants()) EXPECT_THROW(run(v, p, nullptr), std::invalid_argument) << v.name;
}

TEST(RmsNormProblem, BadProblemsNameTheField) {
  Problem p = valid();
  p.rows = 0;
  expect_invalid(p, "rows");
  p = valid();
  p.hidden = -3;
  expect_invalid(p, "hidden");
  p = valid();
  p.eps = -1e-6;
  expect_invalid(p, "eps");
  p = valid();
  p.eps = std::numeric_limits<double>::quiet_NaN();
  expect_invalid(p, "eps");
  p = valid();
  p.x = nullptr;
  expect_invalid(p, "x is null");
  p = valid();
  p.w = nullptr;
  expect_invalid(p, "w is null");
  p = valid();
  p.y = nullptr;
  expect_invalid(p, "y is null");
  p = valid();
  p.dtype = static_cast<DType>(7);
  expect_invalid(p, "dtype");
}

TEST(RmsNormProblem, BytesAndFlops) {
  Problem p = valid();
  p.rows = 4096;
  p.hidden = 8192;
  EXPECT_EQ(p.bytes(), (2u * 4096 * 8192 + 8192) * 2);  // read x and w, write y; bf16
  p.dtype = DType::f32;
  EXPECT_EQ(p.bytes(), (2u * 4096 * 8192 + 8192) * 4);
  EXPECT_DOUBLE_EQ(p.flops(), 4.0 * 4096 * 8192);
}

TEST(RmsNormVectorized, MisalignedPointerIsAReasonNotAFault) {
  Problem p = valid();
  p.x = fake_x + 2;  // 2-byte aligned only; hidden 8 bf16 asks for 16-byte accesses
  const std::string why = variant("vectorized").supports(p);
  EXPECT_NE(why.find("x is not 16-byte aligned"), std::string::npos) << why;
  EXPECT_THROW(run(variant("vectorized"), p, nullptr), std::invalid_argument);
  p.rows = 1;
  p.hidden = 4096;  // the decode kernel: the same 16-byte accesses
  ASSERT_EQ(vectorized_config(p.rows, p.hidden, p.dtype).regime, VectorizedRegime::decode);
  EXPECT_NE(variant("vectorized").supports(p).find("x is not 16-byte aligned"), std::string::npos);
  EXPECT_THROW(run(variant("vectorized"), p, nullptr), std::invalid_argument);
  p.hidden = 7;  // scalar path: element alignment is enough
  EXPECT_EQ(variant("vectorized").supports(p), "");
}

// The launch shape vectorized_config gives a few shapes, exactly (kernels/rmsnorm/vectorized.cu says why).
struct Pinned {
  int64_t rows, hidden;
  DType dtype;
  VectorizedRegime regime;
  int vec, threads_per_row, vectors_per_thread, rows_per_block;
  bool stage_w;
  const char* what;
};
constexpr auto kDecode = VectorizedRegime::decode, kLatency = VectorizedRegime::latency,
               kBandwidth = VectorizedRegime::bandwidth, kTwoPass = VectorizedRegime::two_pass;
const Pinned kPinned[] = {
    // Decode: <= 256 rows of 32 16-byte vectors to 8192 elements, one row a block of the fewest whole
    // warps that hold it in <= 4 vectors a lane, w not staged.
    {1, 4096, DType::bf16, kDecode, 8, 128, 4, 1, false, "Llama-3-8B decode: 512 vectors = 4 warps x 4"},
    {256, 4096, DType::bf16, kDecode, 8, 128, 4, 1, false, "256 sequences: still decode"},
    {64, 8192, DType::bf16, kDecode, 8, 256, 4, 1, false, "Llama-3-70B decode of 64: 1024 vectors = 8 warps x 4"},
    {1, 8192, DType::f32, kDecode, 4, 512, 4, 1, false, "2048 fp32 vectors = 16 warps x 4"},
    {1, 256, DType::bf16, kDecode, 8, 32, 1, 1, false, "32 vectors: one warp of 1"},
    {1, 392, DType::bf16, kDecode, 8, 32, 2, 1, false, "49 vectors: one warp of 2"},
    // Latency: the other problems of <= 256 rows, the most threads a row, w staged if 16-byte vectors.
    {1, 8200, DType::bf16, kLatency, 8, 512, 4, 1, true, "more than 8192 elements: 1025 vectors"},
    {1, 16384, DType::bf16, kLatency, 8, 512, 4, 1, true, "2048 vectors, w staged (32 KB)"},
    {1, 128, DType::bf16, kLatency, 8, 16, 1, 8, true, "16 vectors, fewer than a warp: 8 rows a block"},
    {256, 769, DType::bf16, kLatency, 1, 512, 2, 1, false, "scalar: cp.async moves 16 bytes"},
    {1, 7, DType::f32, kLatency, 1, 8, 1, 16, false, "scalar, 7 elements"},
    // Bandwidth: > 256 rows, the fewest threads at <= 8 vectors each (<= 4 for rows of 8-16 KB), w staged
    // for rows of <= 8 KB.
    {257, 4096, DType::bf16, kBandwidth, 8, 64, 8, 2, true, "257 rows: 64 threads x 8, 2 rows a block"},
    {4096, 4096, DType::bf16, kBandwidth, 8, 64, 8, 2, true, "Llama-3-8B prefill"},
    {16384, 4096, DType::bf16, kBandwidth, 8, 64, 8, 2, true, "a batch of prefills"},
    {8192, 768, DType::bf16, kBandwidth, 8, 16, 8, 8, true, "GPT-2: 96 vectors = 16 threads x 8 (6 used)"},
    {65536, 4096, DType::bf16, kBandwidth, 8, 64, 8, 2, true, "8 KB rows: the longest staged"},
    {4096, 8192, DType::bf16, kBandwidth, 8, 256, 4, 1, false, "16 KB rows: 256 threads x 4, w with x"},
    {4096, 4096, DType::f32, kBandwidth, 4, 256, 4, 1, false, "16 KB fp32 rows: 256 threads x 4"},
    {4096, 4104, DType::bf16, kBandwidth, 8, 256, 4, 1, false, "513 vectors: past 8 KB, 4 a thread (3 used)"},
    {4096, 16384, DType::bf16, kBandwidth, 8, 256, 8, 1, false, "32 KB rows: not staged"},
    {4096, 32768, DType::bf16, kBandwidth, 8, 512, 8, 1, false, "the longest row kept in registers: 512 x 8"},
    {4096, 769, DType::f16, kBandwidth, 1, 128, 8, 1, false, "scalar: the same ladder over elements"},
    {4096, 4095, DType::f32, kBandwidth, 1, 512, 8, 1, false, "scalar, 4095 elements"},
    {4096, 1, DType::f32, kBandwidth, 1, 1, 1, 128, false, "one element a row: 128 rows a block"},
    // Two-pass: rows longer than 512 threads x 8 vectors, at any row count.
    {4096, 65536, DType::bf16, kTwoPass, 8, 1024, 0, 1, false, "8192 vectors"},
    {1, 65536, DType::bf16, kTwoPass, 8, 1024, 0, 1, false, "8192 vectors, one row"},
    {1, 8193, DType::bf16, kTwoPass, 1, 1024, 0, 1, false, "scalar, more than 512 x 8 elements"},
};

TEST(RmsNormVectorized, LaunchShapeFromShape) {
  for (const Pinned& e : kPinned) {
    SCOPED_TRACE(std::to_string(e.rows) + " x " + std::to_string(e.hidden) + " " + std::string(name(e.dtype)) + ": " +
                 e.what);
    const VectorizedConfig c = vectorized_config(e.rows, e.hidden, e.dtype);
    EXPECT_EQ(c.regime, e.regime);
    EXPECT_EQ(c.vec, e.vec);
    EXPECT_EQ(c.threads_per_row, e.threads_per_row);
    EXPECT_EQ(c.vectors_per_thread, e.vectors_per_thread);
    EXPECT_EQ(c.rows_per_block, e.rows_per_block);
    EXPECT_EQ(c.block_threads, e.rows_per_block * e.threads_per_row);
    EXPECT_EQ(c.stage_w, e.stage_w);
  }
}

// A decode row is split over 4 blocks where rows x 4 fit the SMs, else over 2 where rows x 2 fit, and only
// a row of exactly threads_per_row x 4 vectors (kernels/rmsnorm/vectorized.cu says why).
TEST(RmsNormVectorized, DecodeRowSplitWhereSmsAreSpare) {
  struct Split {
    int64_t rows, hidden;
    DType dtype;
    int sms, blocks;
    const char* what;
  };
  const Split kSplits[] = {
      {1, 4096, DType::bf16, 132, 4, "Llama-3-8B decode on an H200"},
      {33, 4096, DType::bf16, 132, 4, "33 x 4 = 132 blocks: the last count split 4 ways"},
      {34, 4096, DType::bf16, 132, 2, "34 x 4 > 132: 2 ways"},
      {66, 4096, DType::bf16, 132, 2, "66 x 2 = 132"},
      {67, 4096, DType::bf16, 132, 1, "67 x 2 > 132: one block a row"},
      {64, 8192, DType::bf16, 132, 2, "Llama-3-70B decode of 64: 8 warps x 4, 2 ways"},
      {64, 8192, DType::bf16, 114, 1, "the same on 114 SMs (H100 PCIe): 128 > 114"},
      {1, 8192, DType::f32, 132, 4, "16 warps x 4"},
      {40, 1024, DType::f16, 132, 2, "one warp of 4 vectors a lane"},
      {256, 4096, DType::bf16, 132, 1, "256 rows: no SM to spare"},
      {1, 4096, DType::bf16, 0, 1, "no SM count: not split"},
      {1, 512, DType::bf16, 132, 1, "64 vectors: one warp of 2 a lane"},
      {1, 4104, DType::bf16, 132, 1, "513 vectors: 8 warps x 4 with bounds checks, not whole"},
      {1, 8200, DType::bf16, 132, 1, "the latency regime"},
      {4096, 4096, DType::bf16, 132, 1, "the bandwidth regime"},
      {1, 65536, DType::bf16, 132, 1, "the two-pass regime"},
  };
  for (const Split& e : kSplits) {
    SCOPED_TRACE(std::to_string(e.rows) + " x " + std::to_string(e.hidden) + " " + std::string(name(e.dtype)) + ", " +
                 std::to_string(e.sms) + " SMs: " + e.what);
    EXPECT_EQ(vectorized_blocks_per_row(vectorized_config(e.rows, e.hidden, e.dtype), e.rows, e.hidden, e.sms),
              e.blocks);
  }
}

TEST(RmsNormVectorized, EveryLaunchShapeCoversItsRow) {
  for (DType t : kAllDTypes)
    for (int64_t rows : {1, 7, 64, 256, 257})
      for (int64_t h : {1, 2, 7, 8, 127, 256, 392, 769, 1000, 1024, 4096, 5125, 8192, 8193, 8200, 16384, 65536,
                        70000}) {
        SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(h) + " " + std::string(name(t)));
        const VectorizedConfig c = vectorized_config(rows, h, t);
        if (c.vectors_per_thread) {
          EXPECT_GE(int64_t{c.threads_per_row} * c.vectors_per_thread * c.vec, h);
        }
        EXPECT_EQ(c.rows_per_block * c.threads_per_row, c.block_threads);
        EXPECT_EQ(h % c.vec, 0);
        // Decode exactly for <= 256 rows of 32 16-byte vectors (512 bytes) to 8192 elements: whole warps,
        // one row a block, no shared memory, no idle warp.
        const bool decode = rows <= 256 && h <= 8192 && h % (16 / size_bytes(t)) == 0 && h * size_bytes(t) >= 512;
        EXPECT_EQ(c.regime == VectorizedRegime::decode, decode);
        if (!decode) continue;
        EXPECT_EQ(c.vec * size_bytes(t), 16u);
        EXPECT_EQ(c.threads_per_row % 32, 0);
        EXPECT_LE(c.threads_per_row, 512);
        EXPECT_EQ(c.rows_per_block, 1);
        EXPECT_FALSE(c.stage_w);
        EXPECT_LT(int64_t{c.threads_per_row} / 2 * c.vectors_per_thread * c.vec, h);
        // A split row: whole 4-vector lanes, and every block of every row resident at once on 132 SMs.
        const int split = vectorized_blocks_per_row(c, rows, h, 132);
        EXPECT_TRUE(split == 1 || split == 2 || split == 4) << split;
        if (split > 1) {
          EXPECT_EQ(int64_t{c.threads_per_row} * 4 * c.vec, h);
          EXPECT_LE(rows * split, 132);
        }
      }
}

// The auto-dispatch has a path for every shape of bench_rmsnorm's "edge" set in every dtype: best_variant
// returns a variant whose supports() takes it (the GPU tests run every variant over the set).
TEST(RmsNormBestVariant, EveryEdgeShapeHasAVariant) {
  for (const bench::RmsNormShape& s : bench::rmsnorm_shape_set("edge"))
    for (DType t : kAllDTypes) {
      Problem p = valid();
      p.rows = s.rows;
      p.hidden = s.hidden;
      p.dtype = t;
      const Variant* v = nullptr;
      EXPECT_NO_THROW(v = &best_variant(p)) << s.name() << " " << name(t);
      if (v) {
        EXPECT_EQ(v->supports(p), "") << v->name << " " << s.name() << " " << name(t);
      }
    }
}

}  // namespace
}  // namespace sb::rmsnorm
