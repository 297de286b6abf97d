// One RMSNorm backward problem on the device: inputs, outputs, workspace, and the check of dx and dw against
// the fp64 reference. Shared by bench_rmsnorm and the GPU tests, so both build inputs and verify the same way.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "harness/cli.h"
#include "harness/device.h"
#include "rmsnorm_backward/rmsnorm_backward.h"
#include "verify.h"

namespace sb::bench {

// Tolerance of one dx element: 4 unit roundoffs of the output dtype (2 ulps) of the reference, plus the fp32
// error of its terms: rstd and the row sums carry the forward's u32 * (16 + 4 sqrt(hidden)) (rmsnorm_tolerance),
// and rstd enters x̂ * mean(x̂ * g) three times, so 3 u32 (16 + 4 sqrt(hidden)) times `scale`, the magnitude
// of the terms (ref::RmsNormBackwardRowOut::dx_scale: dx is a difference and may cancel to far below them);
// plus one ulp at zero for subnormals.
double rmsnorm_backward_dx_tolerance(DType out, int64_t hidden, double ref, double scale);
// Tolerance of one dw element, a sum over `rows` of t = dy * x̂: 4 unit roundoffs of the output dtype, plus
// u32 * (8 sqrt(rows) + 18 + 4 sqrt(hidden)) * abs_sum, abs_sum = sum |t|. The 8 sqrt(rows) u32 is the
// probabilistic bound of an fp32 sum of `rows` terms in any order (Higham and Mary, 2019: the error exceeds
// lambda sqrt(n) u sum |t| with probability at most 2n exp(-lambda^2 / 2), 1e-9 at lambda = 8 and n = 64k);
// the worst-case bound (rows - 1) u32 sum |t| is too loose to catch a missing row. 18 + 4 sqrt(hidden): the
// error of each term (x̂'s rstd as in the forward, two roundings). Depends on the problem, never the variant.
double rmsnorm_backward_dw_tolerance(DType out, int64_t rows, int64_t hidden, double ref, double abs_sum);

class RmsNormBackwardData {
 public:
  // x, dy ~ N(0, 1), w ~ N(1, 0.5^2), drawn on the device from `seed`; dx, dw and the workspace poisoned with
  // NaN. saved_rstd: the problem carries rstd, the fp64 1/rms of each row rounded to fp32 (the forward's saved
  // value), so that the variants' rstd-given path runs; otherwise rstd is null and recomputed.
  RmsNormBackwardData(int64_t rows, int64_t hidden, DType dtype, double eps, uint64_t seed, bool saved_rstd,
                      cudaStream_t stream);

  rmsnorm_backward::Problem problem() const;
  void poison_outputs();
  // dx: every row up to kFullCheckRows, else kSampledRows evenly spaced rows plus the last, with a device-wide
  // scan that no dx element is NaN or Inf; dw: every element (its reference sums every row of x and dy,
  // streamed through the host once per object). Synchronizes.
  Check verify();
  // For ref_copy (copy_reference below): dx holds x, then the first half of dy over its first half. Synchronizes.
  Check verify_copy();
  // The bytes of dw, for the determinism tests. Synchronizes.
  std::vector<unsigned char> dw_bytes() const;

  static constexpr int64_t kFullCheckRows = 4096;
  static constexpr int64_t kSampledRows = 1024;

 private:
  // Calls f(first_row, n, x, dy) over all rows in chunks of at most ~64 MiB of doubles, x and dy converted.
  template <typename F> void for_each_chunk(F&& f) const;
  std::vector<double> copy_rows(const void* base, const std::vector<int64_t>& rows) const;
  void compute_reference();

  int64_t rows_, hidden_;
  DType dtype_;
  double eps_;
  bool saved_rstd_;
  cudaStream_t stream_;
  DeviceBuffer x_, w_, dy_, dx_, dw_, rstd_, workspace_;
  std::vector<int64_t> check_rows_;
  std::vector<double> ref_dx_, dx_scale_, ref_dw_, dw_abs_;  // computed once
};

// The bytes reference: 1.5 * rows * hidden elements copied by cudaMemcpyAsync (x into dx, then the first half
// of dy over the first half of dx): as many bytes read and written, 3 * rows * hidden * sizeof(dtype), as the
// backward's minimum without w and dw.
void copy_reference(const rmsnorm_backward::Problem& p, cudaStream_t stream);
double copy_reference_bytes(const rmsnorm_backward::Problem& p);

// Registers the rmsnorm_backward/... cases for bench_rmsnorm's options (bench_rmsnorm_backward.cpp, linked into
// bench_rmsnorm only).
void register_rmsnorm_backward_cases(const Options& opt);

}  // namespace sb::bench
