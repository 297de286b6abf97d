// CUDA error checking. Every runtime call and every launch goes through SB_CUDA_CHECK / SB_LAUNCH_CHECK;
// a failure throws sb::CudaError carrying file:line, the failed expression and CUDA's own error string.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace sb {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const char* expr, const char* file, int line)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " +
                           cudaGetErrorName(code) + ": " + cudaGetErrorString(code)),
        code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// A failed runtime call also leaves its error as the thread's last error, which the next launch check would
// report as its own. Reading it here hands that error to this throw alone (a sticky error, after a fault,
// stays and fails every later call anyway): without it, a refused cluster launch caught by its test fails
// the next test's first kernel with the same "invalid argument".
inline void cuda_check(cudaError_t code, const char* expr, const char* file, int line) {
  if (code == cudaSuccess) return;
  (void)cudaGetLastError();
  throw CudaError(code, expr, file, line);
}

}  // namespace sb

#define SB_CUDA_CHECK(expr) ::sb::cuda_check((expr), #expr, __FILE__, __LINE__)
// After a <<<...>>> launch: catches bad launch configurations (the launch itself returns nothing).
#define SB_LAUNCH_CHECK() ::sb::cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
