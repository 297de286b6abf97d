// One RMSNorm problem on the device: inputs, output, and the check against the fp64 reference.
// Shared by bench_rmsnorm and the GPU tests, so both build inputs and verify the same way.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "harness/device.h"
#include "verify.h"
#include "rmsnorm/rmsnorm.h"

namespace sb::bench {

// Tolerance of one output element: a few ulps of the output dtype (4 unit roundoffs = 2 ulps) plus
// what fp32 accumulation of `hidden` squares can add (grows like sqrt(hidden) for any summation order
// on random data, and 16 roundoffs for the rsqrt and the products), plus one ulp at zero for subnormals.
// It depends on the dtype and the problem, never on the variant.
double rmsnorm_tolerance(DType out, int64_t hidden, double ref);
// One output element's error as a fraction of rmsnorm_tolerance (<= 1 passes): a NaN reference wants NaN, an
// infinite one the same infinity, a finite one a finite value within the tolerance (else +Inf).
double rmsnorm_error(DType out, int64_t hidden, double got, double want);

// The rows a verification compares with the reference: all of them up to `all_up_to` rows, else `samples`
// evenly spaced rows plus the last.
std::vector<int64_t> rows_to_check(int64_t rows, int64_t all_up_to, int64_t samples);
// `rows` (row indices) of a [*, hidden] device tensor of dtype t, as doubles, row after row. Synchronizes.
std::vector<double> copy_rows_to_host(const void* base, const std::vector<int64_t>& rows, int64_t hidden, DType t,
                                      cudaStream_t s);

class RmsNormData {
 public:
  // x ~ N(0, 1), w ~ N(1, 0.5^2), both drawn on the device from `seed`; y poisoned with NaN.
  RmsNormData(int64_t rows, int64_t hidden, DType dtype, double eps, uint64_t seed, cudaStream_t stream);

  rmsnorm::Problem problem() const;
  // Replace x (rounded to the dtype); for tests of special values. Synchronizes.
  void set_x(const std::vector<float>& x);
  void poison_output();
  // Rows compared with the reference: all of them up to kFullCheckRows, else kSampledRows evenly spaced
  // rows plus the last, together with a device-wide scan that no output element is NaN or Inf
  // (unwritten elements keep the NaN poison). Synchronizes.
  Check verify();
  // For the ref_copy reference case (y = a byte copy of x): the checked rows of y equal x exactly, and
  // no element of y is left NaN (the poison). Synchronizes.
  Check verify_copy();

  static constexpr int64_t kFullCheckRows = 4096;
  static constexpr int64_t kSampledRows = 1024;

 private:
  void compute_reference();

  int64_t rows_, hidden_;
  DType dtype_;
  double eps_;
  cudaStream_t stream_;
  DeviceBuffer x_, w_, y_;
  std::vector<int64_t> check_rows_;
  std::vector<double> ref_;  // reference for check_rows_, computed once
};

}  // namespace sb::bench
