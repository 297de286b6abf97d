// The GPU timer. CUDA events recorded on the benchmark's stream bound every measurement, and only the
// launch sits between them.
//   cold: once the previous launch has finished, the L2's persisting lines are reset; then an L2-sized
//         cudaMemsetAsync flush, a spin hold, start event, launch, stop event. Launches are queued in
//         batches of at most kMaxColdBatch, behind one more launch that is not counted.
//   hot:  K launches captured once in a CUDA graph; event, replay, event; the replay's time net of the
//         graph's own launch, over K. Inputs stay in L2 where they fit, and the graph removes the host's
//         launch cost between the K launches.
// Why each step:
//   - The flush is a memset: do_bench's flush and a model's preceding kernels leave L2 full of dirty lines.
//     It also keeps the GPU busy while the host enqueues the launch, so submission latency stays out.
//   - The persisting reset (cudaCtxResetPersistingL2Cache): lines loaded with an evict-last policy sit in
//     the L2's persisting set-aside, which the flush's ordinary stores do not evict; without the reset a
//     kernel that loads so (torch.compile's RMSNorm does) finds its input in L2 on every cold launch.
//   - The hold (a spin kernel of twice the launch's host time, between flush and start event): a launch
//     whose host side outlasts the flush (cuDNN plans, PyTorch dispatch) is otherwise timed with the GPU
//     idle, waiting for the host.
//   - Net of the graph's own launch: a replay costs the graph's launch G plus K launches; G / K would make
//     a kernel and the floor it is compared with read differently at different K.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <vector>

#include "harness/device.h"

namespace sb::bench {

enum class Mode { cold, hot };
const char* mode_name(Mode m);

using LaunchFn = std::function<void(cudaStream_t)>;

// K launches recorded once and replayed as a unit.
class Replay {
 public:
  virtual ~Replay() = default;
  virtual void replay(cudaStream_t stream) = 0;
  virtual int launches() const = 0;
};
using CaptureFn = std::function<std::unique_ptr<Replay>(cudaStream_t, int launches, const LaunchFn&)>;

// Stream capture into a plain CUDA graph: right for launches that never allocate (all our kernels).
std::unique_ptr<Replay> capture_cuda_graph(cudaStream_t stream, int launches, const LaunchFn& launch);

class GpuTimer {
 public:
  // Allocates the flush buffer once: cudaDevAttrL2CacheSize bytes.
  explicit GpuTimer(cudaStream_t stream);
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  static constexpr int kMaxColdBatch = 4;

  cudaStream_t stream() const { return stream_; }
  std::size_t flush_bytes() const { return flush_.bytes(); }

  void flush_l2();                         // enqueue the memset flush
  void reset_persisting_lines();           // wait for the stream, then make the persisting lines normal
  double cold_ms(const LaunchFn& launch);  // reset, flush, then time one launch
  // `count` cold launches (in [1, kMaxColdBatch]) queued behind one more that is not counted (it follows
  // an idle GPU); their times, in launch order. Each launch's persisting reset waits for the one before.
  // hold_ms > 0: after each flush a one-thread kernel spins that long, touching no memory but the two
  // 8-byte counters of hold_totals.
  std::vector<double> cold_batch_ms(const LaunchFn& launch, int count, double hold_ms = 0);
  double warm_ms(const LaunchFn& launch);  // time one launch, no flush
  double last_enqueue_ms() const { return last_enqueue_ms_; }  // host time of warm_ms's launch call
  double replay_ms(Replay& r);             // time one replay of all its launches (not divided)
  // `count` launches queued back to back, no graph and no synchronization between them, timed by one pair of
  // events: the time per launch that a loop calling it eagerly sees, the larger of its host and GPU times.
  double eager_ms(const LaunchFn& launch, int count);

  // The SM clock now, in MHz: a one-thread kernel spins ~100 us of clock64 cycles and reads %globaltimer
  // around them; synchronizes. Read after a case's timed launches, it shows the clock the case ran at: a
  // power- or heat-capped GPU runs below its boost clock, and two runs can differ by that alone.
  double probe_sm_mhz();
  // The SM clock during cold timing: every hold adds the cycles and nanoseconds it spun to two device
  // counters; their growth between two reads (hold_totals synchronizes) is the clock averaged over the
  // holds in between, right before each timed launch. Zero where no hold ran between the reads.
  struct HoldTotals {
    unsigned long long cycles = 0, ns = 0;
    double mhz_since(const HoldTotals& before) const;
  };
  HoldTotals hold_totals();

 private:
  double elapsed_ms();
  cudaStream_t stream_;
  DeviceBuffer flush_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::vector<cudaEvent_t> batch_start_, batch_stop_;  // kMaxColdBatch + 1 pairs
  double last_enqueue_ms_ = 0;
  bool has_persisting_set_aside_ = true;
  int sm_clock_khz_ = 0;
  DeviceBuffer probe_;        // the clock probe's cycles and nanoseconds
  DeviceBuffer hold_totals_;  // the holds' summed cycles and nanoseconds
};

// The element at index size / 2 once sorted: the median of an odd count, the upper one of an even count.
// Throws std::invalid_argument for no values.
double upper_median(std::vector<double> v);

// The launch time a case's cold batch, hold cap and hot K are sized from: the median of a warm-up's
// event-timed launches (after its first, which pays one-time set-up). Each includes the host's launch
// call, which dominates a microsecond kernel's time; the median keeps one slow host launch from sizing
// such a kernel's hot graph at K = 2. Throws std::invalid_argument for no times.
double sizing_launch_ms(std::vector<double> launches_ms);

// A graph's own launch, apart from its kernels: with t(k) = G + k f, 2 t(k) - t(2k) = G.
double graph_launch_ms(double replay_k_ms, double replay_2k_ms);
// The graph's own launch as the hot timing takes it off, from the settling's graph_launch_ms samples: their
// median, and its standard error (1.2533 sigma / sqrt(n), sigma the samples' median absolute deviation x
// 1.4826). It is taken off only where resolved, the median over kGraphLaunchResolvedSe standard errors: a
// microsecond kernel's settling gives hundreds of close samples (resolved), a multi-millisecond kernel's
// gives a few, each off by its replays' jitter against a G that is a tiny share of the replay, so taking it
// off would add noise and remove no bias worth the name (there the time is graph / K). Throws
// std::invalid_argument for no samples.
struct GraphLaunch {
  double median_ms = 0, standard_error_ms = 0;
  bool resolved = false;
  double taken_off_ms() const { return resolved ? median_ms : 0.0; }
};
constexpr double kGraphLaunchResolvedSe = 3.0;
GraphLaunch estimate_graph_launch(std::vector<double> samples_ms);
// Net hot time per launch: (replay of k launches - the graph's own launch) / k. Throws
// std::invalid_argument for k < 1.
double net_launch_ms(double replay_k_ms, double graph_ms, int k);

// How many cold launches one batch queues, from the sizing launch time: about 0.25 ms of kernel time,
// at least 1, at most GpuTimer::kMaxColdBatch.
int cold_batch_count(double single_launch_ms);

// How many launches a hot graph captures, from the sizing launch time: enough to fill kHotWindowUs
// (event resolution is ~0.5 us), at least 2, at most 100. Google Benchmark repeats the replay until
// min_time of per-launch time has accumulated, so the wall cost is about K x min_time.
constexpr double kHotWindowUs = 50;
int hot_launch_count(double single_launch_ms);

// How many launches one eager timing queues, from the sizing launch time: enough to fill kEagerWindowUs, so
// that the first launch's submission latency, which the GPU waits through idle, is a small share of the total;
// at least 2, at most 100.
constexpr double kEagerWindowUs = 500;
int eager_launch_count(double single_launch_ms);

// An empty kernel: the launch floor that small kernels are compared against.
void launch_empty_kernel(cudaStream_t stream);
// The same, launched with programmatic dependent launch (common/pdl.cuh): the floor of the kernels
// launched that way (rmsnorm/vectorized's decode-sized kernel).
void launch_empty_kernel_pdl(cudaStream_t stream);
// A single-thread kernel that spins until clock64() has advanced `cycles`; writes the cycles it saw
// and the %globaltimer nanoseconds that elapsed to out[0], out[1] (device memory, may be null), and adds
// them to totals[0], totals[1] (device memory, may be null).
void launch_spin_kernel(cudaStream_t stream, long long cycles, long long* out, unsigned long long* totals = nullptr);

}  // namespace sb::bench
