// CPU tests of bench/probe_capi.cpp's C entry point: a bad argument returns 2 with the reason, before
// any CUDA call (so they run on any machine). Its GPU path is rmsnorm::run, tested in test_gpu.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

extern "C" int solbench_rmsnorm(const char* variant, int64_t rows, int64_t hidden, double eps, const char* dtype,
                                const void* x, const void* w, void* y, void* stream, char* err, size_t err_len);

namespace {

alignas(16) char fake_x[64], fake_w[64], fake_y[64];  // never dereferenced: the arguments are rejected first

struct Call {
  const char* variant = "vectorized";
  int64_t rows = 4, hidden = 8;
  const char* dtype = "bf16";
  const void* x = fake_x;
  const void* w = fake_w;
  void* y = fake_y;
  int rc = -1;
  std::string err;

  Call& run() {
    char buf[512] = "untouched";
    rc = solbench_rmsnorm(variant, rows, hidden, 1e-6, dtype, x, w, y, nullptr, buf, sizeof buf);
    err = buf;
    return *this;
  }
};

TEST(ProbeCapi, UnknownVariantIsRejectedByName) {
  Call c;
  c.variant = "fastest";
  c.run();
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("unknown variant 'fastest'"), std::string::npos) << c.err;
}

TEST(ProbeCapi, NullVariantIsRejected) {
  Call c;
  c.variant = nullptr;
  c.run();
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("variant is null"), std::string::npos) << c.err;
}

TEST(ProbeCapi, UnknownDtypeIsRejectedByName) {
  Call c;
  c.dtype = "fp8";
  c.run();
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("unknown dtype 'fp8'"), std::string::npos) << c.err;
}

TEST(ProbeCapi, InvalidProblemGivesTheValidationMessage) {
  Call zero_rows;
  zero_rows.rows = 0;
  zero_rows.run();
  EXPECT_EQ(zero_rows.rc, 2);
  EXPECT_NE(zero_rows.err.find("rows must be >= 1, got 0"), std::string::npos) << zero_rows.err;

  Call null_x;
  null_x.x = nullptr;
  null_x.run();
  EXPECT_EQ(null_x.rc, 2);
  EXPECT_NE(null_x.err.find("x is null"), std::string::npos) << null_x.err;
}

TEST(ProbeCapi, UnsupportedProblemGivesTheVariantsReason) {
  Call c;
  c.x = fake_x + 2;  // not 16-byte aligned: vectorized refuses it
  c.run();
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("rmsnorm/vectorized does not support this problem"), std::string::npos) << c.err;
}

TEST(ProbeCapi, ErrorIsTruncatedToTheBuffer) {
  char buf[8];
  const int rc = solbench_rmsnorm("fastest", 4, 8, 1e-6, "bf16", fake_x, fake_w, fake_y, nullptr, buf, sizeof buf);
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(std::string(buf), "rmsnorm");  // 7 characters and the NUL
}

}  // namespace
