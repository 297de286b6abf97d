// The GPU the process runs on, and device memory that frees itself.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace sb::bench {

// "" when a CUDA device is usable, else why not (no driver, no device, ...). Never throws.
std::string gpu_unavailable_reason();

struct DeviceInfo {
  int id = 0;
  std::string name;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  int sm_clock_khz = 0;   // peak SM clock (cudaDevAttrClockRate)
  int mem_clock_khz = 0;  // peak memory clock
  int mem_bus_bits = 0;
  int driver_version = 0;   // the CUDA version the driver supports (cudaDriverGetVersion), e.g. 13000
  std::string nvidia_driver;  // the kernel driver's own version, e.g. "580.159.04" (nvidia_driver_version)
  int runtime_version = 0;
  int cc_major = 0, cc_minor = 0;
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi names the physical GPU
};
DeviceInfo device_info();  // of the current device; throws CudaError
// The 16 bytes of cudaDeviceProp::uuid in nvidia-smi's form. Runs record it because two GPUs of one model
// can time the same kernels differently (two H200s have read one decode case 4% apart).
std::string format_gpu_uuid(const unsigned char (&bytes)[16]);
// The NVIDIA kernel driver's version ("580.159.04"), which cudaDriverGetVersion does not give (it gives
// the CUDA version the driver supports, 13.0): read from /proc/driver/nvidia/version (Linux), which
// needs no library the CI machines lack. "unknown (<why>)" when it cannot be read or parsed.
std::string nvidia_driver_version();
// The version in that file's text: the first dotted number after "Kernel Module" (both the proprietary
// and the open module's wording), or "" when there is none.
std::string parse_nvrm_version(const std::string& text);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  template <typename T> T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// A non-blocking stream that is destroyed with the object.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const;

 private:
  cudaStream_t s_ = nullptr;
};

}  // namespace sb::bench
