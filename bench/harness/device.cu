#include "harness/device.h"

#include <dlfcn.h>
#include <glob.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "common/check.h"

namespace sb::bench {

namespace {

bool has_nvidia_device_node() {
  glob_t g{};
  const bool found = glob("/dev/nvidia[0-9]*", 0, nullptr, &g) == 0 && g.gl_pathc > 0;
  globfree(&g);
  return found;
}

bool has_driver_library() {
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (h != nullptr) dlclose(h);
  return h != nullptr;
}

}  // namespace

std::string gpu_unavailable_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess && n > 0) return "";
  std::string why = "cudaGetDeviceCount found no CUDA device";
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the error so later calls start clean
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  }
  // Without a GPU the runtime says "driver version is insufficient", which would send a user to update a
  // driver that is not there: name the missing GPU or driver first.
  const bool no_device = e == cudaSuccess || e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver;
  if (no_device && (!has_nvidia_device_node() || !has_driver_library()))
    return "no NVIDIA driver or GPU on this machine; the CUDA runtime says " + why;
  return why;
}

DeviceInfo device_info() {
  DeviceInfo d;
  SB_CUDA_CHECK(cudaGetDevice(&d.id));
  cudaDeviceProp prop{};
  SB_CUDA_CHECK(cudaGetDeviceProperties(&prop, d.id));
  d.name = prop.name;
  d.sm_count = prop.multiProcessorCount;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  int v = 0;
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, d.id));
  d.l2_bytes = static_cast<std::size_t>(v);
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, d.id));
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, d.id));
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&d.mem_bus_bits, cudaDevAttrGlobalMemoryBusWidth, d.id));
  SB_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  SB_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  unsigned char uuid[16];
  std::memcpy(uuid, prop.uuid.bytes, sizeof uuid);
  d.uuid = format_gpu_uuid(uuid);
  d.nvidia_driver = nvidia_driver_version();
  return d;
}

std::string parse_nvrm_version(const std::string& text) {
  const std::string line = text.substr(0, text.find('\n'));
  const auto at = line.find("Kernel Module");
  if (at == std::string::npos) return "";
  std::istringstream words(line.substr(at));
  for (std::string w; words >> w;) {
    bool dotted = std::isdigit(static_cast<unsigned char>(w.front())) && w.find('.') != std::string::npos;
    for (const char c : w) dotted = dotted && (std::isdigit(static_cast<unsigned char>(c)) || c == '.');
    if (dotted) return w;
  }
  return "";
}

std::string nvidia_driver_version() {
  const char* path = "/proc/driver/nvidia/version";
  std::ifstream in(path);
  if (!in) return std::string("unknown (no ") + path + ")";
  std::stringstream text;
  text << in.rdbuf();
  const std::string v = parse_nvrm_version(text.str());
  return v.empty() ? std::string("unknown (") + path + " names no version)" : v;
}

std::string format_gpu_uuid(const unsigned char (&bytes)[16]) {
  std::string s = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
    s += hex;
  }
  return s;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (!bytes) return;
  if (const cudaError_t e = cudaMalloc(&ptr_, bytes); e != cudaSuccess) {
    cudaGetLastError();  // a failed allocation must not surface later as another launch's error
    ptr_ = nullptr;
    throw CudaError(e, ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str(), __FILE__, __LINE__);
  }
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(bytes_, o.bytes_);
  return *this;
}

Stream::Stream() { SB_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::~Stream() {
  if (s_) cudaStreamDestroy(s_);
}
void Stream::sync() const { SB_CUDA_CHECK(cudaStreamSynchronize(s_)); }

}  // namespace sb::bench
