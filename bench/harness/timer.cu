#include "harness/timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/check.h"
#include "common/pdl.cuh"

namespace sb::bench {

const char* mode_name(Mode m) { return m == Mode::cold ? "cold" : "hot"; }

namespace {

class CudaGraphReplay final : public Replay {
 public:
  CudaGraphReplay(cudaStream_t stream, int launches, const LaunchFn& launch) : launches_(launches) {
    SB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      for (int i = 0; i < launches; ++i) launch(stream);
    } catch (...) {
      cudaGraph_t g = nullptr;
      cudaStreamEndCapture(stream, &g);
      if (g) cudaGraphDestroy(g);
      throw;
    }
    SB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
    SB_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
    SB_CUDA_CHECK(cudaGraphUpload(exec_, stream));
  }
  ~CudaGraphReplay() override {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  void replay(cudaStream_t stream) override { SB_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }
  int launches() const override { return launches_; }

 private:
  int launches_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

__global__ void empty_kernel() {}
// The empty kernel of a programmatically dependent launch: nothing in it but the two griddepcontrol
// instructions, in rmsnorm/vectorized's order (the wait, then the release), so that the floor includes the
// kernel's handshake.
__global__ void empty_kernel_pdl() {
  pdl_wait();
  pdl_launch_dependents();
}

__global__ void spin_kernel(long long cycles, long long* out, unsigned long long* totals) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long start = clock64();
  long long now = start;
  while (now - start < cycles) now = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  if (out) {
    out[0] = now - start;
    out[1] = static_cast<long long>(t1 - t0);
  }
  if (totals) {
    atomicAdd(&totals[0], static_cast<unsigned long long>(now - start));
    atomicAdd(&totals[1], t1 - t0);
  }
}

}  // namespace

std::unique_ptr<Replay> capture_cuda_graph(cudaStream_t stream, int launches, const LaunchFn& launch) {
  return std::make_unique<CudaGraphReplay>(stream, launches, launch);
}

GpuTimer::GpuTimer(cudaStream_t stream) : stream_(stream) {
  int dev = 0, l2 = 0;
  SB_CUDA_CHECK(cudaGetDevice(&dev));
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock_khz_, cudaDevAttrClockRate, dev));
  int persisting_max = 0;  // 0 on GPUs without an L2 set-aside for persisting accesses (before sm_80)
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize, dev));
  has_persisting_set_aside_ = persisting_max > 0;
  flush_ = DeviceBuffer(static_cast<std::size_t>(l2));
  probe_ = DeviceBuffer(2 * sizeof(long long));
  hold_totals_ = DeviceBuffer(2 * sizeof(unsigned long long));
  SB_CUDA_CHECK(cudaMemsetAsync(hold_totals_.get(), 0, hold_totals_.bytes(), stream_));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  SB_CUDA_CHECK(cudaEventCreate(&start_));
  SB_CUDA_CHECK(cudaEventCreate(&stop_));
  for (auto* pool : {&batch_start_, &batch_stop_}) {
    pool->resize(kMaxColdBatch + 1, nullptr);
    for (cudaEvent_t& e : *pool) SB_CUDA_CHECK(cudaEventCreate(&e));
  }
}

GpuTimer::~GpuTimer() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  for (auto* pool : {&batch_start_, &batch_stop_})
    for (cudaEvent_t e : *pool)
      if (e) cudaEventDestroy(e);
}

void GpuTimer::flush_l2() { SB_CUDA_CHECK(cudaMemsetAsync(flush_.get(), 0, flush_.bytes(), stream_)); }

double GpuTimer::elapsed_ms() {
  SB_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0.0f;
  SB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

void GpuTimer::reset_persisting_lines() {
  if (!has_persisting_set_aside_) return;  // nothing can persist without a set-aside
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the previous launch's persisting lines are all set
  SB_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
}

double GpuTimer::cold_ms(const LaunchFn& launch) {
  reset_persisting_lines();
  flush_l2();
  return warm_ms(launch);
}

std::vector<double> GpuTimer::cold_batch_ms(const LaunchFn& launch, int count, double hold_ms) {
  if (count < 1 || count > kMaxColdBatch)
    throw std::invalid_argument("GpuTimer::cold_batch_ms: count must be in [1, " + std::to_string(kMaxColdBatch) +
                                "], got " + std::to_string(count));
  const long long hold_cycles = static_cast<long long>(std::max(hold_ms, 0.0) * sm_clock_khz_);
  unsigned long long* totals = hold_totals_.as<unsigned long long>();
  for (int i = 0; i <= count; ++i) {  // launch 0 is not counted
    reset_persisting_lines();
    flush_l2();
    if (hold_cycles > 0) launch_spin_kernel(stream_, hold_cycles, nullptr, totals);
    SB_CUDA_CHECK(cudaEventRecord(batch_start_[i], stream_));
    launch(stream_);
    SB_CUDA_CHECK(cudaEventRecord(batch_stop_[i], stream_));
  }
  SB_CUDA_CHECK(cudaEventSynchronize(batch_stop_[count]));
  std::vector<double> ms(count);
  for (int i = 1; i <= count; ++i) {
    float t = 0.0f;
    SB_CUDA_CHECK(cudaEventElapsedTime(&t, batch_start_[i], batch_stop_[i]));
    ms[i - 1] = t;
  }
  return ms;
}

double GpuTimer::warm_ms(const LaunchFn& launch) {
  SB_CUDA_CHECK(cudaEventRecord(start_, stream_));
  const auto t0 = std::chrono::steady_clock::now();
  launch(stream_);
  last_enqueue_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  SB_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  return elapsed_ms();
}

double GpuTimer::probe_sm_mhz() {
  constexpr double kProbeUs = 100;  // %globaltimer may tick by 1 us: ~1% over the window
  launch_spin_kernel(stream_, static_cast<long long>(kProbeUs * 1e-3 * sm_clock_khz_), probe_.as<long long>());
  long long host[2] = {0, 0};
  SB_CUDA_CHECK(cudaMemcpyAsync(host, probe_.get(), sizeof host, cudaMemcpyDeviceToHost, stream_));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return host[1] > 0 ? 1e3 * static_cast<double>(host[0]) / static_cast<double>(host[1]) : 0.0;
}

GpuTimer::HoldTotals GpuTimer::hold_totals() {
  unsigned long long host[2] = {0, 0};
  SB_CUDA_CHECK(cudaMemcpyAsync(host, hold_totals_.get(), sizeof host, cudaMemcpyDeviceToHost, stream_));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return {host[0], host[1]};
}

double GpuTimer::HoldTotals::mhz_since(const HoldTotals& before) const {
  return ns > before.ns ? 1e3 * static_cast<double>(cycles - before.cycles) / static_cast<double>(ns - before.ns) : 0.0;
}

double GpuTimer::replay_ms(Replay& r) {
  SB_CUDA_CHECK(cudaEventRecord(start_, stream_));
  r.replay(stream_);
  SB_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  return elapsed_ms();
}

double GpuTimer::eager_ms(const LaunchFn& launch, int count) {
  if (count < 1) throw std::invalid_argument("GpuTimer::eager_ms: count must be at least 1");
  SB_CUDA_CHECK(cudaEventRecord(start_, stream_));
  for (int i = 0; i < count; ++i) launch(stream_);
  SB_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  return elapsed_ms() / count;
}

double upper_median(std::vector<double> v) {
  if (v.empty()) throw std::invalid_argument("upper_median: no values");
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

double sizing_launch_ms(std::vector<double> launches_ms) {
  if (launches_ms.empty()) throw std::invalid_argument("sizing_launch_ms: no warm-up launch times");
  return upper_median(std::move(launches_ms));
}

double graph_launch_ms(double replay_k_ms, double replay_2k_ms) { return 2 * replay_k_ms - replay_2k_ms; }

GraphLaunch estimate_graph_launch(std::vector<double> samples_ms) {
  if (samples_ms.empty()) throw std::invalid_argument("estimate_graph_launch: no samples");
  GraphLaunch g;
  const double n = static_cast<double>(samples_ms.size());
  g.median_ms = upper_median(samples_ms);
  for (double& v : samples_ms) v = std::abs(v - g.median_ms);
  const double sigma = 1.4826 * upper_median(std::move(samples_ms));
  g.standard_error_ms = 1.2533 * sigma / std::sqrt(n);
  g.resolved = g.median_ms > kGraphLaunchResolvedSe * g.standard_error_ms;
  return g;
}

double net_launch_ms(double replay_k_ms, double graph_ms, int k) {
  if (k < 1) throw std::invalid_argument("net_launch_ms: k must be at least 1, got " + std::to_string(k));
  return (replay_k_ms - graph_ms) / k;
}

int hot_launch_count(double single_launch_ms) {
  const double k = std::ceil(1e-3 * kHotWindowUs / std::max(single_launch_ms, 1e-6));
  return static_cast<int>(std::clamp(k, 2.0, 100.0));
}

int eager_launch_count(double single_launch_ms) {
  const double k = std::ceil(1e-3 * kEagerWindowUs / std::max(single_launch_ms, 1e-6));
  return static_cast<int>(std::clamp(k, 2.0, 100.0));
}

int cold_batch_count(double single_launch_ms) {
  constexpr double kBatchMs = 0.25;
  const double k = std::floor(kBatchMs / std::max(single_launch_ms, 1e-6));
  return static_cast<int>(std::clamp(k, 1.0, static_cast<double>(GpuTimer::kMaxColdBatch)));
}

void launch_empty_kernel(cudaStream_t stream) {
  empty_kernel<<<1, 32, 0, stream>>>();
  SB_LAUNCH_CHECK();
}

void launch_empty_kernel_pdl(cudaStream_t stream) { launch_pdl(true, empty_kernel_pdl, dim3(1), dim3(32), 0, stream); }

void launch_spin_kernel(cudaStream_t stream, long long cycles, long long* out, unsigned long long* totals) {
  spin_kernel<<<1, 1, 0, stream>>>(cycles, out, totals);
  SB_LAUNCH_CHECK();
}

}  // namespace sb::bench
