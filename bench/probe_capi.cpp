// A C entry point to the RMSNorm variants, so that a script can time the suite's own kernels inside
// another process: scripts/timing_probe.py calls it through ctypes on PyTorch tensors, beside
// torch.compile's kernel, under one protocol in one process. Nothing here times or allocates.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

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
