// One fused residual-add + RMSNorm problem on the device: its inputs, the in-place buffers the op updates, and
// the check of both outputs against the fp64 reference. Shared by bench_rmsnorm and the GPU tests.
// The op works in place, so the inputs are kept apart (inputs: x then residual, contiguous) and copied into
// the working buffers (the same layout) before a run: restore(). An output cannot be poisoned (it is its own
// input), so verification compares every element of the checked rows of both outputs instead, and a guard
// band after the working buffers catches writes past their end.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "common/dtype.h"
#include "fused_add_rmsnorm/fused_add_rmsnorm.h"
#include "harness/device.h"
#include "harness/timer.h"
#include "verify.h"

namespace sb::bench {

class FusedAddRmsNormData {
 public:
  // x, residual ~ N(0, 1) (independent), w ~ N(1, 0.5^2), drawn on the device from `seed`; the working
  // buffers restored from them.
  FusedAddRmsNormData(int64_t rows, int64_t hidden, DType dtype, double eps, uint64_t seed, cudaStream_t stream);

  // The working buffers: x at the start, residual right after it (rows * hidden elements later).
  fused_add_rmsnorm::Problem problem() const;
  // Enqueues the copy of the inputs into the working buffers: one cudaMemcpyAsync of copy_bytes().
  void restore(cudaStream_t s) const;
  // restore() as a launch that owns copies of the pointers (the ref_copy reference case times it).
  LaunchFn restore_fn() const;
  std::size_t copy_bytes() const;  // 2 * rows * hidden * sizeof(dtype)
  // Replace the inputs (rounded to the dtype) and restore; for tests of special values. Synchronizes.
  void set_inputs(const std::vector<float>& x, const std::vector<float>& residual);
  // NaN in both working buffers (for the ref_copy case, whose copy must overwrite it).
  void poison_work();

  // After one run of the op from restored inputs: residual equals the reference exactly (one rounded add),
  // x within rmsnorm_tolerance, in every element of the checked rows (all rows up to kFullCheckRows rows or
  // kFullCheckElements elements, else kSampledRows evenly spaced rows plus the last, with a device-wide scan
  // that no element is NaN or Inf); the guard band is untouched. Synchronizes.
  Check verify();
  // After restore() alone: the checked rows of both working buffers equal the inputs, and (sampled) no
  // element is left NaN. Synchronizes.
  Check verify_copy();

  static constexpr int64_t kFullCheckRows = 4096;
  static constexpr int64_t kFullCheckElements = int64_t{1} << 24;
  static constexpr int64_t kSampledRows = 1024;
  static constexpr std::size_t kGuardBytes = 256;

 private:
  std::size_t tensor_bytes() const { return static_cast<std::size_t>(rows_ * hidden_) * size_bytes(dtype_); }
  const void* input(int which) const;  // 0: x, 1: residual
  void* work(int which) const;
  Check check_guard() const;
  Check scan_nonfinite() const;

  int64_t rows_, hidden_;
  DType dtype_;
  double eps_;
  cudaStream_t stream_;
  DeviceBuffer inputs_, work_, w_;
  std::vector<int64_t> check_rows_;
  std::vector<double> ref_x_, ref_residual_;  // reference for check_rows_, computed once
};

}  // namespace sb::bench
