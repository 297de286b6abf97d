#include "fused_add_rmsnorm_case.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/vec.cuh"
#include "harness/fill.h"
#include "ref/cpu/fused_add_rmsnorm_ref.h"
#include "rmsnorm_case.h"

namespace sb::bench {

namespace {
constexpr double kFail = std::numeric_limits<double>::infinity();
constexpr unsigned char kGuardByte = 0xa5;
}  // namespace

FusedAddRmsNormData::FusedAddRmsNormData(int64_t rows, int64_t hidden, DType dtype, double eps, uint64_t seed,
                                         cudaStream_t stream)
    : rows_(rows), hidden_(hidden), dtype_(dtype), eps_(eps), stream_(stream),
      inputs_(2 * tensor_bytes()), work_(2 * tensor_bytes() + kGuardBytes), w_(hidden * size_bytes(dtype)) {
  const std::size_t n = static_cast<std::size_t>(rows * hidden);
  fill_normal(inputs_.get(), n, dtype, seed, 0.0f, 1.0f, stream);
  fill_normal(const_cast<void*>(input(1)), n, dtype, seed ^ 0xfaded, 0.0f, 1.0f, stream);
  fill_normal(w_.get(), hidden, dtype, seed ^ 0x5eed, 1.0f, 0.5f, stream);
  SB_CUDA_CHECK(cudaMemsetAsync(static_cast<unsigned char*>(work_.get()) + 2 * tensor_bytes(), kGuardByte, kGuardBytes,
                                stream));
  restore(stream);
  check_rows_ = rows <= kFullCheckRows || rows * hidden <= kFullCheckElements ? rows_to_check(rows, rows, 1)
                                                                            : rows_to_check(rows, 0, kSampledRows);
}

const void* FusedAddRmsNormData::input(int which) const {
  return static_cast<const unsigned char*>(inputs_.get()) + which * tensor_bytes();
}
void* FusedAddRmsNormData::work(int which) const { return static_cast<unsigned char*>(work_.get()) + which * tensor_bytes(); }

fused_add_rmsnorm::Problem FusedAddRmsNormData::problem() const {
  return {rows_, hidden_, eps_, dtype_, work(0), work(1), w_.get()};
}

std::size_t FusedAddRmsNormData::copy_bytes() const { return 2 * tensor_bytes(); }

void FusedAddRmsNormData::restore(cudaStream_t s) const {
  SB_CUDA_CHECK(cudaMemcpyAsync(work_.get(), inputs_.get(), copy_bytes(), cudaMemcpyDeviceToDevice, s));
}

LaunchFn FusedAddRmsNormData::restore_fn() const {
  return [dst = work_.get(), src = inputs_.get(), bytes = copy_bytes()](cudaStream_t s) {
    SB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
  };
}

void FusedAddRmsNormData::set_inputs(const std::vector<float>& x, const std::vector<float>& residual) {
  const std::size_t n = static_cast<std::size_t>(rows_ * hidden_);
  if (x.size() != n || residual.size() != n) throw std::invalid_argument("set_inputs: expected rows * hidden values each");
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> host(2 * n);
    for (std::size_t i = 0; i < n; ++i) host[i] = from_float<T>(x[i]), host[n + i] = from_float<T>(residual[i]);
    SB_CUDA_CHECK(cudaMemcpyAsync(inputs_.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream_));
    restore(stream_);
    SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  });
  ref_x_.clear();
  ref_residual_.clear();
}

void FusedAddRmsNormData::poison_work() { fill_nan(work_.get(), 2 * static_cast<std::size_t>(rows_ * hidden_), dtype_, stream_); }

Check FusedAddRmsNormData::check_guard() const {
  std::vector<unsigned char> guard(kGuardBytes);
  SB_CUDA_CHECK(cudaMemcpyAsync(guard.data(), static_cast<const unsigned char*>(work_.get()) + 2 * tensor_bytes(),
                                kGuardBytes, cudaMemcpyDeviceToHost, stream_));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  for (std::size_t i = 0; i < kGuardBytes; ++i)
    if (guard[i] != kGuardByte)
      return {false, kFail, "byte " + std::to_string(i) + " past the end of residual was written"};
  return {true, 0.0, ""};
}

Check FusedAddRmsNormData::scan_nonfinite() const {
  if (static_cast<int64_t>(check_rows_.size()) == rows_) return {true, 0.0, ""};
  const char* names[2] = {"x", "residual"};
  for (int k = 0; k < 2; ++k)
    if (const std::size_t bad = count_nonfinite(work(k), static_cast<std::size_t>(rows_ * hidden_), dtype_, stream_); bad)
      return {false, kFail, std::to_string(bad) + " element(s) of " + names[k] + " are NaN/Inf; inputs are finite"};
  return {true, 0.0, ""};
}

Check FusedAddRmsNormData::verify() {
  if (ref_x_.empty()) {
    const std::vector<double> x = copy_rows_as_double(input(0), check_rows_, hidden_, dtype_, stream_),
                              r = copy_rows_as_double(input(1), check_rows_, hidden_, dtype_, stream_),
                              w = copy_rows_as_double(w_.get(), {0}, hidden_, dtype_, stream_);
    ref_x_.resize(x.size());
    ref_residual_.resize(x.size());
    for (std::size_t i = 0; i < check_rows_.size(); ++i)
      ref::fused_add_rmsnorm_row(x.data() + i * hidden_, r.data() + i * hidden_, w.data(), ref_x_.data() + i * hidden_,
                                 ref_residual_.data() + i * hidden_, hidden_, eps_, dtype_);
  }
  const std::vector<double> x = copy_rows_as_double(work(0), check_rows_, hidden_, dtype_, stream_),
                            r = copy_rows_as_double(work(1), check_rows_, hidden_, dtype_, stream_);
  Check c{true, 0.0, ""};
  char buf[320];
  auto fail = [&](const char* what, std::size_t i, double got, double want, double e) {
    c.ok = false;
    std::snprintf(buf, sizeof buf, "%s row %lld col %lld: got %.9g, reference %.9g (error %.3g x tolerance)", what,
                  static_cast<long long>(check_rows_[i / hidden_]), static_cast<long long>(i % hidden_), got, want, e);
    c.message = buf;
  };
  for (std::size_t i = 0; i < x.size(); ++i) {
    // The residual is one rounded add: equal to the reference (NaN where it is NaN), else the error is infinite.
    const bool same = r[i] == ref_residual_[i] || (std::isnan(r[i]) && std::isnan(ref_residual_[i]));
    if (!same) {
      c.err = kFail;
      fail("residual", i, r[i], ref_residual_[i], kFail);
      return c;
    }
    const double e = rmsnorm_error(dtype_, hidden_, x[i], ref_x_[i]);
    if (e > c.err) {
      c.err = e;
      if (e > 1.0) fail("x", i, x[i], ref_x_[i], e);
    }
  }
  if (!c.ok) return c;
  if (Check g = check_guard(); !g.ok) return g;
  return scan_nonfinite();
}

Check FusedAddRmsNormData::verify_copy() {
  for (int k = 0; k < 2; ++k) {
    const std::vector<double> in = copy_rows_as_double(input(k), check_rows_, hidden_, dtype_, stream_),
                              out = copy_rows_as_double(work(k), check_rows_, hidden_, dtype_, stream_);
    for (std::size_t i = 0; i < in.size(); ++i)
      if (std::memcmp(&in[i], &out[i], sizeof(double)) != 0)
        return {false, kFail,
                std::string(k ? "residual" : "x") + " row " + std::to_string(check_rows_[i / hidden_]) + " col " +
                    std::to_string(i % hidden_) + ": the copy differs from the input"};
  }
  if (Check g = check_guard(); !g.ok) return g;
  return scan_nonfinite();
}

}  // namespace sb::bench
