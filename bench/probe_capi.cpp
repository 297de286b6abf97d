// C entry points to the RMSNorm and attention variants, so that a script can run the suite's own kernels
// inside another process: tools/energy_probe.py and tools/layer_timeline.py call them through ctypes on
// PyTorch tensors, beside PyTorch's own ops in the same process. Nothing here times or allocates.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "attention/attention.h"
#include "rmsnorm/rmsnorm.h"

namespace {
int fail(int code, const std::string& what, char* err, size_t err_len) {
  if (err && err_len) std::snprintf(err, err_len, "%s", what.c_str());
  return code;
}
}  // namespace

// Enqueues variant `variant` on `stream` (a cudaStream_t; null for the default stream). Returns 0, or
// 2 for a bad argument (unknown variant or dtype, invalid or unsupported problem), 1 for a CUDA error;
// the reason goes to err (err_len bytes, NUL-terminated).
extern "C" __attribute__((visibility("default"))) int solbench_rmsnorm(const char* variant, int64_t rows,
                                                                       int64_t hidden, double eps,
                                                                       const char* dtype, const void* x,
                                                                       const void* w, void* y, void* stream,
                                                                       char* err, size_t err_len) {
  try {
    if (!variant) return fail(2, "rmsnorm: variant is null", err, err_len);
    const auto t = sb::parse_dtype(dtype ? dtype : "");
    if (!t) return fail(2, std::string("rmsnorm: unknown dtype '") + (dtype ? dtype : "(null)") + "'", err, err_len);
    sb::rmsnorm::Problem p;
    p.rows = rows;
    p.hidden = hidden;
    p.eps = eps;
    p.dtype = *t;
    p.x = x;
    p.w = w;
    p.y = y;
    sb::rmsnorm::run(sb::rmsnorm::variant(variant), p, static_cast<cudaStream_t>(stream));
    return 0;
  } catch (const std::invalid_argument& e) {
    return fail(2, e.what(), err, err_len);
  } catch (const std::exception& e) {
    return fail(1, e.what(), err, err_len);
  }
}

namespace {
// The attention problem the two entry points below describe (BSHD tensors, attention/attention.h).
sb::attention::Problem attention_problem(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t head_dim,
                                         int64_t q_len, int64_t kv_len, int causal, const char* dtype,
                                         const void* q, const void* k, const void* v, void* o) {
  const auto t = sb::parse_dtype(dtype ? dtype : "");
  if (!t) throw std::invalid_argument(std::string("attention: unknown dtype '") + (dtype ? dtype : "(null)") + "'");
  sb::attention::Problem p;
  p.batch = batch;
  p.heads_q = heads_q;
  p.heads_kv = heads_kv;
  p.head_dim = head_dim;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.causal = causal != 0;
  p.dtype = *t;
  p.q = q;
  p.k = k;
  p.v = v;
  p.o = o;
  return p;
}
}  // namespace

// The device scratch attention variant `variant` needs for this problem on these tensors, in *bytes
// (allocate it 256-byte aligned; nothing is read or launched). Returns 0, 2 for a bad argument or a
// problem the variant does not support, 1 for a CUDA error (a variant whose plan depends on the device
// reads it here); the reason goes to err.
extern "C" __attribute__((visibility("default"))) int solbench_attention_workspace(
    const char* variant, int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t head_dim, int64_t q_len,
    int64_t kv_len, int causal, const char* dtype, const void* q, const void* k, const void* v, void* o,
    size_t* bytes, char* err, size_t err_len) {
  try {
    if (!variant) return fail(2, "attention: variant is null", err, err_len);
    if (!bytes) return fail(2, "attention: bytes is null", err, err_len);
    const std::string name = variant;  // named: GCC 13 warns of a reference bound through a temporary argument
    const sb::attention::Variant& var = sb::attention::variant(name);
    const sb::attention::Problem p = attention_problem(batch, heads_q, heads_kv, head_dim, q_len, kv_len, causal,
                                                       dtype, q, k, v, o);
    p.validate();
    if (const std::string why = var.supports(p); !why.empty())
      return fail(2, std::string("attention/") + variant + " does not support this problem: " + why, err, err_len);
    *bytes = var.workspace_bytes(p);
    return 0;
  } catch (const std::invalid_argument& e) {
    return fail(2, e.what(), err, err_len);
  } catch (const std::exception& e) {
    return fail(1, e.what(), err, err_len);
  }
}

// Enqueues attention variant `variant` on `stream`: O = softmax(Q K^T / sqrt(head_dim) + mask) V over BSHD
// tensors, with `workspace` of `workspace_size` bytes (solbench_attention_workspace). No cuBLAS handle is
// passed, so a variant that needs one (manual) refuses. Returns as solbench_rmsnorm does.
extern "C" __attribute__((visibility("default"))) int solbench_attention(
    const char* variant, int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t head_dim, int64_t q_len,
    int64_t kv_len, int causal, const char* dtype, const void* q, const void* k, const void* v, void* o,
    void* workspace, size_t workspace_size, void* stream, char* err, size_t err_len) {
  try {
    if (!variant) return fail(2, "attention: variant is null", err, err_len);
    sb::attention::Problem p = attention_problem(batch, heads_q, heads_kv, head_dim, q_len, kv_len, causal, dtype,
                                                 q, k, v, o);
    p.workspace = workspace;
    p.workspace_size = workspace_size;
    sb::attention::run(sb::attention::variant(variant), p, static_cast<cudaStream_t>(stream));
    return 0;
  } catch (const std::invalid_argument& e) {
    return fail(2, e.what(), err, err_len);
  } catch (const std::exception& e) {
    return fail(1, e.what(), err, err_len);
  }
}
