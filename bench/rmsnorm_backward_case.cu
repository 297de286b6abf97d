#include "rmsnorm_backward_case.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/vec.cuh"
#include "harness/fill.h"
#include "ref/cpu/rmsnorm_backward_ref.h"
#include "rmsnorm_case.h"

namespace sb::bench {

namespace {
constexpr double kU32 = 0x1p-24;

// Records e in c (the largest so far), with the message of the first element past its tolerance.
void record(Check& c, double e, const char* what, int64_t row, int64_t col, double got, double want, double tol) {
  if (e <= c.err) return;
  c.err = e;
  if (e > 1.0) {
    c.ok = false;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s row %lld col %lld: got %.9g, reference %.9g (error %.3g x tolerance %.3g)",
                  what, static_cast<long long>(row), static_cast<long long>(col), got, want, e, tol);
    c.message = buf;
  }
}
}  // namespace

double rmsnorm_backward_dx_tolerance(DType out, int64_t hidden, double ref, double scale) {
  return 4.0 * unit_roundoff(out) * std::fabs(ref) +
         3.0 * kU32 * (16.0 + 4.0 * std::sqrt(static_cast<double>(hidden))) * scale + 2.0 * min_subnormal(out);
}

double rmsnorm_backward_dw_tolerance(DType out, int64_t rows, int64_t hidden, double ref, double abs_sum) {
  return 4.0 * unit_roundoff(out) * std::fabs(ref) +
         kU32 * (8.0 * std::sqrt(static_cast<double>(rows)) + 18.0 + 4.0 * std::sqrt(static_cast<double>(hidden))) *
             abs_sum +
         2.0 * min_subnormal(out);
}

RmsNormBackwardData::RmsNormBackwardData(int64_t rows, int64_t hidden, DType dtype, double eps, uint64_t seed,
                                         bool saved_rstd, cudaStream_t stream)
    : rows_(rows), hidden_(hidden), dtype_(dtype), eps_(eps), saved_rstd_(saved_rstd), stream_(stream),
      x_(rows * hidden * size_bytes(dtype)), w_(hidden * size_bytes(dtype)), dy_(rows * hidden * size_bytes(dtype)),
      dx_(rows * hidden * size_bytes(dtype)), dw_(hidden * size_bytes(dtype)),
      rstd_(saved_rstd ? rows * sizeof(float) : 0) {
  rmsnorm_backward::Problem shape;
  shape.rows = rows;
  shape.hidden = hidden;
  workspace_ = DeviceBuffer(rmsnorm_backward::workspace_bytes(shape));
  fill_normal(x_.get(), rows * hidden, dtype, seed, 0.0f, 1.0f, stream);
  fill_normal(w_.get(), hidden, dtype, seed ^ 0x5eed, 1.0f, 0.5f, stream);
  fill_normal(dy_.get(), rows * hidden, dtype, seed ^ 0xd1d1, 0.0f, 1.0f, stream);
  poison_outputs();
  check_rows_ = rows_to_check(rows, kFullCheckRows, kSampledRows);
  if (saved_rstd) {
    std::vector<float> rstd(rows);
    for_each_chunk([&](int64_t first, int64_t n, const double* x, const double*) {
      for (int64_t r = 0; r < n; ++r) {
        double sum_sq = 0.0;
        for (int64_t i = 0; i < hidden; ++i) sum_sq += x[r * hidden + i] * x[r * hidden + i];
        rstd[first + r] = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(hidden) + eps));
      }
    });
    SB_CUDA_CHECK(cudaMemcpyAsync(rstd_.get(), rstd.data(), rows * sizeof(float), cudaMemcpyHostToDevice, stream));
    SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

rmsnorm_backward::Problem RmsNormBackwardData::problem() const {
  const float* rstd = saved_rstd_ ? rstd_.as<float>() : nullptr;
  return {rows_, hidden_, eps_, dtype_, x_.get(), w_.get(), dy_.get(), rstd, dx_.get(), dw_.get(),
          workspace_.get(), workspace_.bytes()};
}

void RmsNormBackwardData::poison_outputs() {
  fill_nan(dx_.get(), rows_ * hidden_, dtype_, stream_);
  fill_nan(dw_.get(), hidden_, dtype_, stream_);
  fill_nan(workspace_.get(), workspace_.bytes() / sizeof(float), DType::f32, stream_);
}

template <typename F>
void RmsNormBackwardData::for_each_chunk(F&& f) const {
  const int64_t chunk = std::max<int64_t>(1, (int64_t{8} << 20) / hidden_);  // 8 Mi elements: 64 MiB of doubles
  const std::size_t elem = size_bytes(dtype_);
  std::vector<unsigned char> raw(std::min(chunk, rows_) * hidden_ * elem);
  std::vector<double> x(std::min(chunk, rows_) * hidden_), dy(x.size());
  for (int64_t first = 0; first < rows_; first += chunk) {
    const int64_t n = std::min(chunk, rows_ - first);
    for (const std::pair<const void*, double*>& io : {std::pair<const void*, double*>{x_.get(), x.data()},
                                                     std::pair<const void*, double*>{dy_.get(), dy.data()}}) {
      const void* src = io.first;
      double* dst = io.second;
      SB_CUDA_CHECK(cudaMemcpyAsync(raw.data(), static_cast<const unsigned char*>(src) + first * hidden_ * elem,
                                    n * hidden_ * elem, cudaMemcpyDeviceToHost, stream_));
      SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
      dispatch(dtype_, [&](auto tag) {
        using T = decltype(tag);
        const T* t = reinterpret_cast<const T*>(raw.data());
        for (int64_t i = 0; i < n * hidden_; ++i) dst[i] = to_float(t[i]);
      });
    }
    f(first, n, x.data(), dy.data());
  }
}

std::vector<double> RmsNormBackwardData::copy_rows(const void* base, const std::vector<int64_t>& rows) const {
  return copy_rows_as_double(base, rows, hidden_, dtype_, stream_);
}

void RmsNormBackwardData::compute_reference() {
  const std::vector<double> w = copy_rows(w_.get(), {0});
  ref_dx_.assign(check_rows_.size() * hidden_, 0.0);
  dx_scale_.assign(ref_dx_.size(), 0.0);
  ref_dw_.assign(hidden_, 0.0);
  dw_abs_.assign(hidden_, 0.0);
  std::size_t next = 0;  // the first checked row not yet reached
  for_each_chunk([&](int64_t first, int64_t n, const double* x, const double* dy) {
    for (int64_t r = 0; r < n; ++r) {
      ref::RmsNormBackwardRowOut out{nullptr, ref_dw_.data(), dw_abs_.data(), nullptr};
      const bool checked = next < check_rows_.size() && check_rows_[next] == first + r;
      if (checked) {
        out.dx = ref_dx_.data() + next * hidden_;
        out.dx_scale = dx_scale_.data() + next * hidden_;
        ++next;
      }
      ref::rmsnorm_backward_row(x + r * hidden_, w.data(), dy + r * hidden_, hidden_, eps_, out);
    }
  });
}

Check RmsNormBackwardData::verify() {
  if (ref_dw_.empty()) compute_reference();
  Check c{true, 0.0, ""};
  const std::vector<double> dx = copy_rows(dx_.get(), check_rows_);
  for (std::size_t i = 0; i < check_rows_.size(); ++i)
    for (int64_t j = 0; j < hidden_; ++j) {
      const std::size_t k = i * hidden_ + j;
      const double tol = rmsnorm_backward_dx_tolerance(dtype_, hidden_, ref_dx_[k], dx_scale_[k]);
      record(c, error_vs_tolerance(dx[k], ref_dx_[k], tol), "dx", check_rows_[i], j, dx[k], ref_dx_[k], tol);
    }
  const std::vector<double> dw = copy_rows(dw_.get(), {0});
  for (int64_t j = 0; j < hidden_; ++j) {
    const double tol = rmsnorm_backward_dw_tolerance(dtype_, rows_, hidden_, ref_dw_[j], dw_abs_[j]);
    record(c, error_vs_tolerance(dw[j], ref_dw_[j], tol), "dw", 0, j, dw[j], ref_dw_[j], tol);
  }
  if (c.ok && static_cast<int64_t>(check_rows_.size()) < rows_)
    fail_if_nonfinite(c, dx_.get(), rows_ * hidden_, dtype_, stream_, "dx");
  return c;
}

Check RmsNormBackwardData::verify_copy() {
  Check c{true, 0.0, ""};
  const std::vector<double> x = copy_rows(x_.get(), check_rows_), dy = copy_rows(dy_.get(), check_rows_),
                            dx = copy_rows(dx_.get(), check_rows_);
  const int64_t half = rows_ * hidden_ / 2;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const int64_t row = check_rows_[i / hidden_], col = static_cast<int64_t>(i % hidden_);
    const double want = row * hidden_ + col < half ? dy[i] : x[i];
    if (!(dx[i] == want))
      return {false, std::numeric_limits<double>::infinity(),
              "row " + std::to_string(row) + " col " + std::to_string(col) + ": the copy differs from its source"};
  }
  if (static_cast<int64_t>(check_rows_.size()) < rows_)
    if (const std::size_t bad = count_nonfinite(dx_.get(), rows_ * hidden_, dtype_, stream_); bad)
      c = {false, std::numeric_limits<double>::infinity(), std::to_string(bad) + " element(s) of the copy are NaN/Inf"};
  return c;
}

std::vector<unsigned char> RmsNormBackwardData::dw_bytes() const {
  std::vector<unsigned char> out(dw_.bytes());
  SB_CUDA_CHECK(cudaMemcpyAsync(out.data(), dw_.get(), out.size(), cudaMemcpyDeviceToHost, stream_));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return out;
}

void copy_reference(const rmsnorm_backward::Problem& p, cudaStream_t stream) {
  const std::size_t bytes = static_cast<std::size_t>(p.rows * p.hidden) * size_bytes(p.dtype);
  const std::size_t half = static_cast<std::size_t>(p.rows * p.hidden / 2) * size_bytes(p.dtype);
  SB_CUDA_CHECK(cudaMemcpyAsync(p.dx, p.x, bytes, cudaMemcpyDeviceToDevice, stream));
  if (half) SB_CUDA_CHECK(cudaMemcpyAsync(p.dx, p.dy, half, cudaMemcpyDeviceToDevice, stream));
}

double copy_reference_bytes(const rmsnorm_backward::Problem& p) {
  return 2.0 * static_cast<double>(p.rows * p.hidden + p.rows * p.hidden / 2) * static_cast<double>(size_bytes(p.dtype));
}

}  // namespace sb::bench
