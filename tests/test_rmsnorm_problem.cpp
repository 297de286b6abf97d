// CPU tests of the RMSNorm problem: validation messages, byte/FLOP formulas, the vectorized variant's
// launch geometry. run() validates before it touches the GPU, so bad problems are testable here.
#include <gtest/gtest.h>

#include "expect.h"
#include "rmsnorm/rmsnorm.h"

namespace sb::rmsnorm {
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
  p.hidden = 7;  // scalar path: element alignment is enough
  EXPECT_EQ(variant("vectorized").supports(p), "");
}

TEST(RmsNormVectorized, LaunchShapeFromHiddenSize) {
  // Llama-3-8B: 4096 bf16 = 512 16-byte vectors -> 64 threads x 8 vectors, 2 rows per 128-thread block.
  VectorizedConfig c = vectorized_config(4096, 4096, DType::bf16);
  EXPECT_EQ(c.vec, 8);
  EXPECT_EQ(c.threads_per_row, 64);
  EXPECT_EQ(c.vectors_per_thread, 8);
  EXPECT_EQ(c.rows_per_block, 2);
  EXPECT_EQ(c.block_threads, 128);
  // Short rows pack: 768 bf16 = 96 vectors -> 16 threads x 8 (6 used), 8 rows per block.
  c = vectorized_config(8192, 768, DType::bf16);
  EXPECT_EQ(c.threads_per_row, 16);
  EXPECT_EQ(c.rows_per_block, 8);
  // 32768 bf16 = 4096 vectors: the largest row kept in registers (512 threads x 8).
  c = vectorized_config(4096, 32768, DType::bf16);
  EXPECT_EQ(c.threads_per_row, 512);
  EXPECT_EQ(c.vectors_per_thread, 8);
  EXPECT_EQ(c.rows_per_block, 1);
  // 65536 bf16 = 8192 vectors: too long for registers -> two-pass.
  c = vectorized_config(4096, 65536, DType::bf16);
  EXPECT_EQ(c.vectors_per_thread, 0);
  EXPECT_EQ(c.block_threads, 1024);
  // Odd sizes take the scalar path, with the same ladder over elements.
  c = vectorized_config(4096, 769, DType::f16);
  EXPECT_EQ(c.vec, 1);
  EXPECT_EQ(c.threads_per_row, 128);
  EXPECT_EQ(c.vectors_per_thread, 8);
  c = vectorized_config(4096, 1, DType::f32);
  EXPECT_EQ(c.vec, 1);
  EXPECT_EQ(c.threads_per_row, 1);
  EXPECT_EQ(c.vectors_per_thread, 1);
  EXPECT_EQ(c.rows_per_block, 128);
  EXPECT_FALSE(c.stage_w);
  // Latency regime (<= 256 rows): one vector a thread, w staged. Llama-3-8B decode: 512 threads.
  c = vectorized_config(1, 4096, DType::bf16);
  EXPECT_EQ(c.threads_per_row, 512);
  EXPECT_EQ(c.vectors_per_thread, 1);
  EXPECT_EQ(c.block_threads, 512);
  EXPECT_TRUE(c.stage_w);
  // Llama-3-70B decode of 64 sequences: 1024 vectors need 2 a thread at the 512-thread cap.
  c = vectorized_config(64, 8192, DType::bf16);
  EXPECT_EQ(c.threads_per_row, 512);
  EXPECT_EQ(c.vectors_per_thread, 2);
  // The scalar path cannot stage w (cp.async moves 16 bytes).
  c = vectorized_config(1, 7, DType::f32);
  EXPECT_EQ(c.threads_per_row, 8);
  EXPECT_FALSE(c.stage_w);
  // Every configuration covers its row exactly once.
  for (DType t : kAllDTypes)
    for (int64_t rows : {1, 256, 257})
    for (int64_t h : {1, 2, 7, 8, 127, 769, 1024, 4096, 5125, 8192, 16384, 65536, 70000}) {
      c = vectorized_config(rows, h, t);
      if (c.vectors_per_thread) {
        EXPECT_GE(int64_t{c.threads_per_row} * c.vectors_per_thread * c.vec, h);
      }
      EXPECT_EQ(c.rows_per_block * c.threads_per_row, c.block_threads);
      EXPECT_EQ(h % c.vec, 0);
    }
}

}  // namespace
}  // namespace sb::rmsnorm
