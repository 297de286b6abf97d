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

// `rows` rows of `hidden` elements of `dtype` at device memory `base`, copied to the host as doubles (stream
// synchronized). What the RMSNorm problems' verifications compare.
std::vector<double> copy_rows_as_double(const void* base, const std::vector<int64_t>& rows, int64_t hidden,
                                        DType dtype, cudaStream_t stream);
// |got - want| / tol, with a NaN or Inf reference matched only by itself (anything else: infinity), and a
// non-finite result where the reference is finite: infinity.
double error_vs_tolerance(double got, double want, double tol);

// The rows an RMSNorm verification compares: all of them up to `full` rows, else `sampled` evenly spaced rows
// plus the last.
std::vector<int64_t> rows_to_check(int64_t rows, int64_t full, int64_t sampled);
// Where some rows went unchecked: fails `c` if any of the n elements at p is NaN or Inf (the NaN poison of an
// element left unwritten), naming them `what`. Synchronizes.
void fail_if_nonfinite(Check& c, const void* p, std::size_t n, DType dtype, cudaStream_t stream, const std::string& what);

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
