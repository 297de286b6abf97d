// The GPU timer. Only CUDA events recorded on the benchmark's stream bound a measurement, and only the
// launch sits between them:
//   cold: an L2-sized cudaMemsetAsync (outside the events), then event, launch, event. The flush also
//         keeps the GPU busy while the host enqueues the launch, so submission latency stays out.
//         Before each flush, once the launch before it has finished, the L2's persisting lines are made
//         normal again (cudaCtxResetPersistingL2Cache): lines loaded with an L2 evict-last policy sit in
//         the persisting set-aside (11.25 MiB on the H200s here), which the flush's ordinary stores do
//         not evict, so without the reset a kernel that loads so (torch.compile's RMSNorm does) finds its
//         input in L2 on every "cold" launch (session 24: an 8 MiB evict-last read 5.7 against 7.4 us for
//         the same read with ordinary loads; with the reset 7.0).
//         Cold launches are enqueued in batches (flush, event, launch, event, flush, ...; <= 5 launches);
//         with the reset each launch's host synchronization comes before its flush (without it, v10: one
//         synchronization a batch, the batch queued whole). Between flush and start event a spin kernel holds
//         the GPU for twice the launch's host time, so a launch with a heavy host side (cuDNN SDPA:
//         25.6 us timed vs 17.3 us by do_bench, whose 256 MB flush hides it) is not timed while the GPU
//         waits for the host.
//         What batching does not reproduce: triton's do_bench, which never lets the GPU idle, times a
//         ~10 us launch 0.5-1.3 us longer. On the H200 (session 12, results/h200/NOTES.md) that extra is
//         outside the kernel: CUPTI's kernel durations are the same under do_bench's loop and under one
//         that synchronizes every iteration; it does not depend on how deep the queue runs (the host 16
//         or 1,024 iterations ahead read the same) but on the GPU never idling (SOLBENCH_COLD_QUEUE=
//         continuous, below, adds 0.7-0.8 us to every cold launch up to ~90 us, none measurable past ~115).
//         The default keeps the figure nearer the kernel's own duration.
//   hot:  K launches captured once in a CUDA graph; event, replay, event; time / K. Inputs stay in L2
//         when they fit, and graph replay removes the host's launch cost between the K launches.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <vector>

#include "harness/device.h"
#include "harness/timer_settings.h"

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
  // Allocates the flush buffer once: cudaDevAttrL2CacheSize bytes, or SOLBENCH_FLUSH_BYTES (for
  // experiments on the flush itself; the run context records the size used).
  explicit GpuTimer(cudaStream_t stream);
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  cudaStream_t stream() const { return stream_; }
  std::size_t flush_bytes() const { return flush_.bytes(); }
  // How the flush fills L2: "memset" (cudaMemsetAsync, the default) or "kernel" (a grid-stride kernel
  // of 16-byte stores, write-allocating in L2 as PyTorch's zero_ in triton's do_bench does) leave it
  // full of dirty lines, which the timed launch's misses write back as they evict them; "read" (a
  // grid-stride kernel of 16-byte loads) leaves it full of clean lines, so that the same launch's
  // misses write nothing back. With the reset of the persisting lines before it (above), every method
  // also evicts lines loaded with an L2 evict-last policy (HarnessGpu.FlushEvictsLinesMarkedEvictLast).
  // Set by SOLBENCH_FLUSH_METHOD, for experiments on the flush (recorded in the run context): "read" against the default measures what the dirty lines cost a
  // cold launch (results/h200/NOTES.md). The default stays a write: do_bench's flush and a model's
  // preceding kernels leave dirty lines.
  const char* flush_method() const;
  // Where cold_batch_ms's hold goes: "after-flush" (the default: flush, hold, start event) or
  // "before-flush" (hold, flush, start event: the flush's tail meets the launch, as in do_bench, where
  // the flush directly precedes the start event); set by SOLBENCH_COLD_HOLD (recorded in the run context).
  const char* cold_hold() const { return hold_before_flush_ ? "before-flush" : "after-flush"; }
  // How cold batches follow each other: "batched" (the default: the host waits for each batch before
  // queuing the next, so the GPU idles for that round trip every <= 5 launches) or "continuous" (each
  // call queues its batch before waiting for the previous one and returns the previous one's times,
  // so the GPU never idles between batches, as in triton's do_bench or a model's stream of kernels);
  // set by SOLBENCH_COLD_QUEUE (recorded in the run context). Continuous leaves one batch in flight
  // after each call: drain() waits for it (the bench calls it after a case's timed launches).
  // Measured (H200, session 12, two passes each): continuous reads vectorized RMSNorm 1 x 4096 4.81 us
  // against 4.03 batched, at::rms_norm 256 x 4096 11.07 against 10.25, decode_splitk b1 KV 4096 14.74
  // against 14.08, at::rms_norm 65536 x 1024 87.9 against 87.1, and launches past ~115 us within 0.3%.
  const char* cold_queue() const { return continuous_ ? "continuous" : "batched"; }
  // Milliseconds of GPU idle before the settle loop of each case whose launch takes >= kRestMinLaunchMs
  // (0, the default: none); set by SOLBENCH_REST_MS (0-10000), for experiments (recorded in the run
  // context and in the timing protocol's text). A launch that long is power-limited: its clock, and so
  // its time, depends on how hard the GPU worked in the preceding seconds (session 11's clock probe:
  // ~1.94 GHz after 1 s idle, ~1.70 after 100 ms of SDPA prefill; 20 ms idle brings it back to ~1.81, 100
  // ms to ~1.90), so without a rest its figure depends on which cases ran before it.
  double rest_ms() const { return rest_ms_; }
  // The cold hold's floor in milliseconds (0, the default: the hold is twice the launch's host time);
  // set by SOLBENCH_MIN_HOLD_US (0-1000), for experiments (recorded in the run context and the timing
  // protocol's text): whether a cold figure depends on how long the GPU idles between flush and launch.
  double min_hold_ms() const { return min_hold_ms_; }
  // Whether each cold launch's flush is preceded by a reset of the L2's persisting lines (above): "on",
  // the default, or "off" (SOLBENCH_PERSISTING_RESET=off, for experiments: protocol v10's cold state).
  // With the reset each cold launch of a batch waits for the one before it.
  const char* persisting_reset() const { return reset_persisting_ ? "on" : "off"; }
  // Which warm-up launch time sizes a case's cold batch and hot graph (sizing_launch_ms): "median", the
  // default since session 44, or "last" (SOLBENCH_WARMUP_SIZING=last, for experiments: protocols up to
  // v73, where one slow host launch at the end of the warm-up gave a microsecond kernel a hot graph of 2
  // launches instead of 8; session 43, hot 1 x 4096 2.71 against 1.36 us).
  const char* warmup_sizing() const { return size_from_median_ ? "median" : "last"; }
  // How a hot case's time per launch is taken: "net", the default since protocol v378 (session 47): the
  // graph's own launch G measured once per case, during the settling, as the median of graph_launch_ms over
  // pairs of replays of K and 2K, then each iteration one replay of K net of it, over K (net_launch_ms; the
  // run records G as the graph_launch_us counter). Session 46, c225: within 0-3% of marginal's figures at
  // about 1.3x a graph pass's wall time. For experiments (SOLBENCH_HOT_TIMING): "graph" (one replay of K
  // launches over K, v122's: G, 2.7-4.8 us on the H200s, is spread over the K kernels, so a kernel and the
  // floor it is compared with read differently at different K; session 44 fitted 0.50 us a launch for the
  // PDL floor and 0.95 for 1 x 4096 under K of 6-10), or "marginal" (a graph of K and one of 2K replayed
  // back to back each iteration, their difference over K, marginal_launch_ms; session 45, c220:
  // K-independent and stable to 1%, but 3K launches an iteration and about 2.5x a graph pass's wall time).
  HotTiming hot_timing() const { return hot_timing_; }
  // The window a hot graph's K launches are sized to fill (hot_launch_count): kHotWindowUs, or
  // SOLBENCH_HOT_WINDOW_US (experiments).
  double hot_window_us() const { return hot_window_us_; }
  static constexpr double kRestMinLaunchMs = 1.0;

  void flush_l2();                         // enqueue the flush
  void reset_persisting_lines();           // when on: wait for the stream, then the persisting lines normal
  double cold_ms(const LaunchFn& launch);  // flush, then time one launch
  // `count` cold launches queued behind one more that is not counted (it follows an idle GPU);
  // one synchronization; the per-launch times, in launch order. count in [1, kMaxColdBatch].
  // hold_ms > 0: after each flush, a one-thread kernel spins that long (outside the events, touching
  // no memory but two 8-byte clock counters at its end, hold_totals) so that the host has enqueued the
  // launch before its start event is reached: a launch whose host side outlasts the flush (cuDNN plans,
  // PyTorch dispatch) would otherwise be timed with the GPU idle waiting for it.
  std::vector<double> cold_batch_ms(const LaunchFn& launch, int count, double hold_ms = 0);
  static constexpr int kMaxColdBatch = 4;
  void drain();  // continuous cold queue: wait for the batch still in flight, discard its times
  double warm_ms(const LaunchFn& launch);  // time one launch, no flush
  double last_enqueue_ms() const { return last_enqueue_ms_; }  // host time of warm_ms's launch call
  double replay_ms(Replay& r);             // time one replay of all its launches (not divided)
  // The SM clock now, in MHz: a one-thread kernel spins ~100 us of SM cycles (clock64) and reads
  // %globaltimer (ns) around them; synchronizes. Called after a case's timed launches (outside them), it
  // shows the clock the case ran at: a power- or heat-capped GPU runs below its boost clock, and
  // two runs, or the harness and do_bench, can differ by that alone.
  double probe_sm_mhz();
  // The SM clock *during* cold timing: every hold (the spin between a cold launch's flush and its start
  // event) adds the SM cycles and %globaltimer nanoseconds it spun to two device counters. hold_totals()
  // reads them (synchronizes); the counters' growth between two reads, as MHz, is the clock the GPU ran
  // the holds at: an average over a case's whole timed loop, read right before each timed launch, where
  // probe_sm_mhz() is one sample after the loop. Zero where no hold ran between the reads. The harness
  // self-test checks it against the probe; in its first full run (H200, 29fde1b) it was within 25 MHz of
  // probe_sm_mhz() at 506 of 507 cold cases (results/h200/NOTES.md).
  struct HoldTotals {
    unsigned long long cycles = 0, ns = 0;
    double mhz_since(const HoldTotals& before) const;
  };
  HoldTotals hold_totals();

 private:
  double elapsed_ms();
  cudaStream_t stream_;
  DeviceBuffer flush_;
  DeviceBuffer flush_sink_;  // the read flush's never-written sink
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  // Two pools of kMaxColdBatch + 1 event pairs: the continuous queue fills one while the other is in flight.
  std::vector<cudaEvent_t> batch_start_[2], batch_stop_[2];
  void enqueue_batch(int pool, const LaunchFn& launch, int count, long long hold_cycles);
  std::vector<double> batch_times(int pool, int count);
  bool continuous_ = false;
  int pending_pool_ = -1, pending_count_ = 0;  // the continuous queue's batch in flight (pool -1: none)
  double last_enqueue_ms_ = 0;
  FlushMethod flush_method_ = FlushMethod::memset;
  bool hold_before_flush_ = false;
  double rest_ms_ = 0;
  double min_hold_ms_ = 0;
  bool reset_persisting_ = true;
  bool size_from_median_ = true;
  HotTiming hot_timing_ = HotTiming::net;
  double hot_window_us_ = kHotWindowUs;
  bool has_persisting_set_aside_ = true;
  int flush_blocks_ = 0;
  int sm_clock_khz_ = 0;
  DeviceBuffer probe_;        // the clock probe's cycles and nanoseconds
  DeviceBuffer hold_totals_;  // the holds' summed cycles and nanoseconds (hold_totals)
};

// The element at index size / 2 once sorted: the median of an odd count, the upper one of an even count
// (a cold batch's iteration time, the hold's host time, sizing_launch_ms). Throws std::invalid_argument
// for no values.
double upper_median(std::vector<double> v);

// The launch time a case's decisions (cold batch, hot K, hot's upper limit) are sized from: of a warm-up's
// event-timed launches after its first (which pays one-time set-up), the median (median = true; the upper
// one of an even count) or the last. Each time includes the host's launch call, which dominates a
// microsecond kernel's: the median is about the same for a kernel and the empty-kernel floor it is compared
// with (K 7-10 on the H200s; session 44, c216), where the last follows one host hiccup (K 2 in session 43).
// Throws std::invalid_argument for no times.
double sizing_launch_ms(std::vector<double> launches_ms, bool median);

// Marginal hot time per launch (SOLBENCH_HOT_TIMING=marginal): (replay of 2k launches - replay of k) / k.
// Throws std::invalid_argument for k < 1.
double marginal_launch_ms(double replay_k_ms, double replay_2k_ms, int k);
// A graph's own launch, apart from its kernels (SOLBENCH_HOT_TIMING=net): with t(k) = G + k f, it is
// 2 t(k) - t(2k) = G.
double graph_launch_ms(double replay_k_ms, double replay_2k_ms);
// The graph's own launch as SOLBENCH_HOT_TIMING=net takes it off, from the settling's graph_launch_ms samples:
// their median, and its standard error (1.2533 sigma / sqrt(n), sigma the samples' median absolute deviation
// x 1.4826). It is taken off only where resolved, the median over kGraphLaunchResolvedSe standard errors: a
// microsecond kernel's settling gives hundreds of samples within ~1 us of each other, G 2.7-4.8 us on the
// H200s (resolved); a 5 ms kernel's gives 3 or 4, each off by its replays' jitter (tens of microseconds at
// a clock moving by a percent) against a G that is 0.04% of the replay, so taking it off would add noise
// and remove no bias worth the name (not resolved: graph / K). In c02506e's run (session 47, H200) G was
// resolved at 369 of 525 hot medians (2.1-3.7 us at the microsecond rows); the 156 others were all K = 2 rows
// of 184 us or more, their estimates -162 to +141 us. A resolved G is not always the graph's launch alone: in
// 0334843's run (session 59, history/) 72 of 353 resolved medians took off a G over 10 us (up to 190), all at K = 2
// with launches of 140 us to 6 ms, most of them PyTorch's multi-kernel ops. There G is whatever a replay costs over
// K launches at the marginal rate, so net reads what marginal would: G / K was 6.6% of a launch at most (for
// torch_manual_composite's 152-us b1 MHA KV 32768), 0.2-1.0% at the suite's single kernels of 0.6-6 ms and 3.3%
// at its whole decoder layer (b1 KV 32768, 496 us). Throws std::invalid_argument for no samples.
struct GraphLaunch {
  double median_ms = 0, standard_error_ms = 0;
  bool resolved = false;
  double taken_off_ms() const { return resolved ? median_ms : 0.0; }
};
constexpr double kGraphLaunchResolvedSe = 3.0;
GraphLaunch estimate_graph_launch(std::vector<double> samples_ms);
// Net hot time per launch (SOLBENCH_HOT_TIMING=net): (replay of k launches - the graph's own launch) / k.
// Throws std::invalid_argument for k < 1.
double net_launch_ms(double replay_k_ms, double graph_ms, int k);

// How many cold launches one batch queues, from one warm launch's time: about 0.25 ms of kernel time,
// at least 1, at most GpuTimer::kMaxColdBatch.
int cold_batch_count(double single_launch_ms);

// How many launches a hot measurement captures, from one warm launch's time: enough for a window of
// window_us (kHotWindowUs, ~50 us, by default: event resolution is ~0.5 us), at least 2, at most 100.
// Google Benchmark then repeats the replay until min_time of per-launch time has accumulated, so the wall
// cost is about K x min_time. The warm launch's time includes the host's launch call, ~4-6 us, so a
// microsecond kernel gets K 7-12 at the default window, where G / K is a third of its graph / K figure and
// the noise of G's estimate (about +-0.4 us between repetitions on the H200s) is +-0.04 us a launch; a
// wider window (SOLBENCH_HOT_WINDOW_US, for experiments) gives such kernels K up to 100.
int hot_launch_count(double single_launch_ms, double window_us = kHotWindowUs);

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
