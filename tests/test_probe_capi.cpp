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

// The attention entry points, likewise: bad arguments are 2 with the reason before any CUDA call.
extern "C" int solbench_attention_workspace(const char* variant, int64_t batch, int64_t heads_q, int64_t heads_kv,
                                            int64_t head_dim, int64_t q_len, int64_t kv_len, int causal,
                                            const char* dtype, const void* q, const void* k, const void* v, void* o,
                                            size_t* bytes, char* err, size_t err_len);
extern "C" int solbench_attention(const char* variant, int64_t batch, int64_t heads_q, int64_t heads_kv,
                                  int64_t head_dim, int64_t q_len, int64_t kv_len, int causal, const char* dtype,
                                  const void* q, const void* k, const void* v, void* o, void* workspace,
                                  size_t workspace_size, void* stream, char* err, size_t err_len);

namespace {

alignas(16) char fake_q[64], fake_k[64], fake_v[64], fake_o[64];

struct AttentionCall {
  const char* variant = "wgmma_flash";
  int64_t batch = 1, heads_q = 4, heads_kv = 2, head_dim = 64, q_len = 8, kv_len = 8;
  const char* dtype = "bf16";
  const void* q = fake_q;
  int rc = -1, rc_workspace = -1;
  std::string err, err_workspace;
  size_t bytes = 12345;

  AttentionCall& run() {
    char buf[512] = "untouched";
    rc = solbench_attention(variant, batch, heads_q, heads_kv, head_dim, q_len, kv_len, 1, dtype, q, fake_k, fake_v,
                            fake_o, nullptr, 0, nullptr, buf, sizeof buf);
    err = buf;
    char wbuf[512] = "untouched";
    rc_workspace = solbench_attention_workspace(variant, batch, heads_q, heads_kv, head_dim, q_len, kv_len, 1, dtype,
                                                q, fake_k, fake_v, fake_o, &bytes, wbuf, sizeof wbuf);
    err_workspace = wbuf;
    return *this;
  }
  // Both entry points refuse with the same reason, and the workspace size is left alone.
  void expect_refused(const std::string& reason) const {
    EXPECT_EQ(rc, 2);
    EXPECT_NE(err.find(reason), std::string::npos) << err;
    EXPECT_EQ(rc_workspace, 2);
    EXPECT_NE(err_workspace.find(reason), std::string::npos) << err_workspace;
    EXPECT_EQ(bytes, 12345u);
  }
};

TEST(ProbeCapiAttention, UnknownVariantIsRejectedByName) {
  AttentionCall c;
  c.variant = "fastest";
  c.run().expect_refused("unknown variant 'fastest'");
}

TEST(ProbeCapiAttention, NullVariantIsRejected) {
  AttentionCall c;
  c.variant = nullptr;
  c.run().expect_refused("variant is null");
}

TEST(ProbeCapiAttention, UnknownDtypeIsRejectedByName) {
  AttentionCall c;
  c.dtype = "fp8";
  c.run().expect_refused("unknown dtype 'fp8'");
}

TEST(ProbeCapiAttention, InvalidProblemGivesTheValidationMessage) {
  AttentionCall groups;
  groups.heads_q = 6;
  groups.heads_kv = 4;
  groups.run().expect_refused("heads_q (6) must be a multiple of heads_kv (4)");

  AttentionCall null_q;
  null_q.q = nullptr;
  null_q.run().expect_refused("q is null");
}

TEST(ProbeCapiAttention, UnsupportedProblemGivesTheVariantsReason) {
  AttentionCall c;
  c.variant = "manual";  // no cuBLAS handle comes through the probe
  c.run().expect_refused("attention/manual does not support this problem: needs a cuBLAS handle");
}

TEST(ProbeCapiAttention, NullBytesIsRejected) {
  char buf[512] = "untouched";
  const int rc = solbench_attention_workspace("wgmma_flash", 1, 4, 2, 64, 8, 8, 1, "bf16", fake_q, fake_k, fake_v,
                                              fake_o, nullptr, buf, sizeof buf);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(std::string(buf).find("bytes is null"), std::string::npos) << buf;
}

}  // namespace
