#include "rmsnorm_case.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/vec.cuh"
#include "harness/fill.h"
#include "ref/cpu/rmsnorm_ref.h"

namespace sb::bench {

double rmsnorm_tolerance(DType out, int64_t hidden, double ref) {
  const double rel = 4.0 * unit_roundoff(out) +
                     unit_roundoff(DType::f32) * (16.0 + 4.0 * std::sqrt(static_cast<double>(hidden)));
  return std::fabs(ref) * rel + 2.0 * min_subnormal(out);
}

double rmsnorm_error(DType out, int64_t hidden, double got, double want) {
  return error_vs_tolerance(got, want, rmsnorm_tolerance(out, hidden, want));
}

RmsNormData::RmsNormData(int64_t rows, int64_t hidden, DType dtype, double eps, uint64_t seed, cudaStream_t stream)
    : rows_(rows), hidden_(hidden), dtype_(dtype), eps_(eps), stream_(stream),
      x_(rows * hidden * size_bytes(dtype)), w_(hidden * size_bytes(dtype)), y_(rows * hidden * size_bytes(dtype)) {
  fill_normal(x_.get(), rows * hidden, dtype, seed, 0.0f, 1.0f, stream);
  fill_normal(w_.get(), hidden, dtype, seed ^ 0x5eed, 1.0f, 0.5f, stream);
  poison_output();
  check_rows_ = rows_to_check(rows, kFullCheckRows, kSampledRows);
}

std::vector<int64_t> rows_to_check(int64_t rows, int64_t full, int64_t sampled) {
  std::vector<int64_t> out;
  if (rows <= full) {
    for (int64_t r = 0; r < rows; ++r) out.push_back(r);
  } else {
    const int64_t step = rows / sampled;
    for (int64_t i = 0; i < sampled; ++i) out.push_back(i * step);
    if (out.back() != rows - 1) out.push_back(rows - 1);
  }
  return out;
}

void fail_if_nonfinite(Check& c, const void* p, std::size_t n, DType dtype, cudaStream_t stream, const std::string& what) {
  if (const std::size_t bad = count_nonfinite(p, n, dtype, stream); bad) {
    c.ok = false;
    c.err = std::numeric_limits<double>::infinity();
    c.message = std::to_string(bad) + " " + what + " element(s) are NaN/Inf (unwritten or overflowed); inputs are finite";
  }
}

rmsnorm::Problem RmsNormData::problem() const {
  rmsnorm::Problem p;
  p.rows = rows_;
  p.hidden = hidden_;
  p.eps = eps_;
  p.dtype = dtype_;
  p.x = x_.get();
  p.w = w_.get();
  p.y = y_.get();
  return p;
}

void RmsNormData::set_x(const std::vector<float>& x) {
  if (static_cast<int64_t>(x.size()) != rows_ * hidden_)
    throw std::invalid_argument("set_x: expected rows * hidden values");
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> host(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) host[i] = from_float<T>(x[i]);
    SB_CUDA_CHECK(cudaMemcpyAsync(x_.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream_));
    SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  });
  ref_.clear();
}

void RmsNormData::poison_output() { fill_nan(y_.get(), rows_ * hidden_, dtype_, stream_); }

std::vector<double> copy_rows_as_double(const void* base, const std::vector<int64_t>& rows, int64_t hidden,
                                        DType dtype, cudaStream_t stream) {
  const std::size_t row_bytes = hidden * size_bytes(dtype);
  std::vector<unsigned char> raw(rows.size() * row_bytes);
  for (std::size_t i = 0; i < rows.size(); ++i)
    SB_CUDA_CHECK(cudaMemcpyAsync(raw.data() + i * row_bytes, static_cast<const unsigned char*>(base) + rows[i] * row_bytes,
                                  row_bytes, cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> out(rows.size() * hidden);
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* v = reinterpret_cast<const T*>(raw.data());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = to_float(v[i]);
  });
  return out;
}

double error_vs_tolerance(double got, double want, double tol) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : std::numeric_limits<double>::infinity();
  if (std::isinf(want)) return got == want ? 0.0 : std::numeric_limits<double>::infinity();
  return std::isfinite(got) ? std::fabs(got - want) / tol : std::numeric_limits<double>::infinity();
}

void RmsNormData::compute_reference() {
  const std::vector<double> x = copy_rows_as_double(x_.get(), check_rows_, hidden_, dtype_, stream_);
  const std::vector<double> w = copy_rows_as_double(w_.get(), {0}, hidden_, dtype_, stream_);
  ref_.resize(x.size());
  for (std::size_t i = 0; i < check_rows_.size(); ++i)
    ref::rmsnorm_row(x.data() + i * hidden_, w.data(), ref_.data() + i * hidden_, hidden_, eps_);
}

Check RmsNormData::verify() {
  if (ref_.empty()) compute_reference();
  Check c{true, 0.0, ""};
  const std::vector<double> y = copy_rows_as_double(y_.get(), check_rows_, hidden_, dtype_, stream_);
  char buf[256];
  for (std::size_t i = 0; i < check_rows_.size(); ++i) {
    for (int64_t j = 0; j < hidden_; ++j) {
      const double got = y[i * hidden_ + j], want = ref_[i * hidden_ + j];
      const double e = error_vs_tolerance(got, want, rmsnorm_tolerance(dtype_, hidden_, want));
      if (e > c.err) {
        c.err = e;
        if (e > 1.0) {
          c.ok = false;
          std::snprintf(buf, sizeof buf, "row %lld col %lld: got %.9g, reference %.9g (error %.3g x tolerance %.3g)",
                        static_cast<long long>(check_rows_[i]), static_cast<long long>(j), got, want, e,
                        rmsnorm_tolerance(dtype_, hidden_, want));
          c.message = buf;
        }
      }
    }
  }
  if (c.ok && static_cast<int64_t>(check_rows_.size()) < rows_)
    fail_if_nonfinite(c, y_.get(), rows_ * hidden_, dtype_, stream_, "output");
  return c;
}

Check RmsNormData::verify_copy() {
  Check c{true, 0.0, ""};
  const std::vector<double> x = copy_rows_as_double(x_.get(), check_rows_, hidden_, dtype_, stream_),
                            y = copy_rows_as_double(y_.get(), check_rows_, hidden_, dtype_, stream_);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] == y[i])) {
      c = {false, std::numeric_limits<double>::infinity(),
           "row " + std::to_string(check_rows_[i / hidden_]) + " col " + std::to_string(i % hidden_) +
               ": the copy differs from x"};
      return c;
    }
  }
  if (static_cast<int64_t>(check_rows_.size()) < rows_) {
    if (const std::size_t bad = count_nonfinite(y_.get(), rows_ * hidden_, dtype_, stream_); bad)
      c = {false, std::numeric_limits<double>::infinity(), std::to_string(bad) + " element(s) of the copy are NaN/Inf (unwritten)"};
  }
  return c;
}

}  // namespace sb::bench
