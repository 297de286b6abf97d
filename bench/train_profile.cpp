// train_profile: one training step (train_model.h) of each implementation under PyTorch's Kineto profiler,
// CPU and CUDA activity with memory. Built only with libtorch.
//
// usage: train_profile [--config NAME] --out DIR
//   NAME: a training config (train_config.h: small, 1b; default small). For each of torch and solbench it
//   builds the model, runs kWarmUpSteps steps unprofiled, profiles one, and writes
//     DIR/train_profile_<impl>.json  the per-op table (below), the step's CUDA time and the norms' share of it;
//     DIR/train_trace_<impl>.json    the Chrome trace (chrome://tracing, Perfetto), as Kineto saves it.
// Exit status: 0, 1 when a step or a file fails, 2 on a bad argument, 77 without a CUDA device.
//
// The table is PyTorch's key_averages() computed here from the profiler's events, one row per op name:
//   calls         how many times the op ran;
//   self_cuda_us  the GPU time of the kernels, copies and memsets the op launched itself (a device event
//                 belongs to the op its launch is correlated with: the innermost op around the launch);
//   cuda_us       the same with the ops nested in it (aten::linear's includes its aten::mm's);
//   cpu_us        the host time of its calls, nested ops included;
//   cuda_alloc_bytes  the device memory its calls allocated, nested ops included (frees not subtracted).
// Rows are sorted by self_cuda_us; the top kTableRows are written. step_cuda_us is the GPU time of every
// device event of the step. norm_cuda_us counts the device events launched inside a norm op, forward or
// backward: aten::rms_norm and FusedRmsNormBackward0 (PyTorch's), solbench::rms_norm and
// solbench::rms_norm_backward (ours; train_norm.cpp records them); norm_cuda_share is its share of the step.
#include <ATen/ATen.h>
#include <kineto/ActivityType.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/check.h"
#include "harness/partial.h"
#include "train_model.h"

namespace sb::bench {
namespace {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

constexpr int kWarmUpSteps = 3;
constexpr std::size_t kTableRows = 40;
constexpr uint64_t kSeed = 1;
const std::set<std::string> kNormOps = {"aten::rms_norm", "FusedRmsNormBackward0", "solbench::rms_norm",
                                        "solbench::rms_norm_backward"};

struct Usage : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Args {
  std::string config = "small";
  std::string out;
};

const char* const kUsage = "usage: train_profile [--config NAME] --out DIR   (NAME: small or 1b; default small)\n";

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      std::exit(0);
    }
    const auto eq = arg.find('=');
    const std::string flag = arg.substr(0, eq);
    if (flag != "--config" && flag != "--out") throw Usage("unknown argument '" + arg + "'");
    std::string value;
    if (eq != std::string::npos) value = arg.substr(eq + 1);
    else if (i + 1 < argc) value = argv[++i];
    if (value.empty()) throw Usage(flag + " needs a value");
    (flag == "--config" ? a.config : a.out) = value;
  }
  if (a.out.empty()) throw Usage("--out DIR is required");
  return a;
}

// One op call: its host interval and thread, and what the device events and allocations add to it.
struct OpCall {
  std::string name;
  uint64_t start = 0, end = 0, thread = 0;
  double self_cuda_us = 0, cuda_us = 0;
  int64_t alloc_bytes = 0;
  bool in_norm = false;
};

struct Summary {
  std::vector<OpCall> calls;
  double step_cuda_us = 0, norm_cuda_us = 0, unattributed_cuda_us = 0;
  uint64_t first_ns = UINT64_MAX, last_ns = 0;  // the step's device events' span
};

bool is_host_op(const prof::KinetoEvent& e) {
  if (e.deviceType() != c10::DeviceType::CPU || e.startThreadId() != e.endThreadId()) return false;
  const auto t = static_cast<libkineto::ActivityType>(e.activityType());
  return t == libkineto::ActivityType::CPU_OP || t == libkineto::ActivityType::USER_ANNOTATION;
}
bool is_memory(const prof::KinetoEvent& e) { return e.name() == "[memory]" || e.name() == "[OutOfMemory]"; }

// Nests the calls of each thread by their intervals, then adds each call's totals to its parent's and marks
// what runs inside a norm op. Allocations (time, thread, bytes) go to the innermost call around them.
void nest(Summary& s, std::vector<std::tuple<uint64_t, uint64_t, int64_t>> allocations) {
  std::map<uint64_t, std::vector<std::size_t>> by_thread;
  for (std::size_t i = 0; i < s.calls.size(); ++i) by_thread[s.calls[i].thread].push_back(i);
  std::sort(allocations.begin(), allocations.end());
  for (auto& [thread, ids] : by_thread) {
    std::sort(ids.begin(), ids.end(), [&](std::size_t a, std::size_t b) {
      const OpCall &x = s.calls[a], &y = s.calls[b];
      return x.start != y.start ? x.start < y.start : x.end > y.end;
    });
    std::vector<std::size_t> open;
    auto close_until = [&](uint64_t t) {
      while (!open.empty() && s.calls[open.back()].end < t) {
        const OpCall& done = s.calls[open.back()];
        open.pop_back();
        if (!open.empty()) {
          s.calls[open.back()].cuda_us += done.cuda_us;
          s.calls[open.back()].alloc_bytes += done.alloc_bytes;
        }
      }
    };
    auto alloc = std::lower_bound(allocations.begin(), allocations.end(), std::make_tuple(thread, uint64_t{0}, int64_t{0}));
    auto place_allocations_before = [&](uint64_t t) {
      for (; alloc != allocations.end() && std::get<0>(*alloc) == thread && std::get<1>(*alloc) < t; ++alloc) {
        close_until(std::get<1>(*alloc));
        if (!open.empty()) s.calls[open.back()].alloc_bytes += std::get<2>(*alloc);
      }
    };
    for (const std::size_t i : ids) {
      place_allocations_before(s.calls[i].start);
      close_until(s.calls[i].start);
      OpCall& c = s.calls[i];
      c.in_norm = kNormOps.count(c.name) || (!open.empty() && s.calls[open.back()].in_norm);
      c.cuda_us = c.self_cuda_us;
      if (c.in_norm) s.norm_cuda_us += c.self_cuda_us;
      open.push_back(i);
    }
    place_allocations_before(UINT64_MAX);
    close_until(UINT64_MAX);
  }
}

Summary summarize(const std::vector<prof::KinetoEvent>& events) {
  Summary s;
  std::map<uint64_t, std::size_t> by_correlation;
  for (const prof::KinetoEvent& e : events)
    if (is_host_op(e) && !is_memory(e)) {
      by_correlation[e.correlationId()] = s.calls.size();
      s.calls.push_back({e.name(), e.startNs(), e.endNs(), e.startThreadId()});
    }
  std::vector<std::tuple<uint64_t, uint64_t, int64_t>> allocations;  // thread, time, bytes
  for (const prof::KinetoEvent& e : events) {
    if (is_memory(e)) {
      if (e.deviceType() == c10::DeviceType::CUDA && e.nBytes() > 0)
        allocations.emplace_back(e.startThreadId(), e.startNs(), e.nBytes());
      continue;
    }
    if (e.deviceType() != c10::DeviceType::CUDA) continue;
    const double us = static_cast<double>(e.durationNs()) * 1e-3;
    s.step_cuda_us += us;
    s.first_ns = std::min<uint64_t>(s.first_ns, e.startNs());
    s.last_ns = std::max<uint64_t>(s.last_ns, e.endNs());
    const auto op = by_correlation.find(e.linkedCorrelationId());
    if (op != by_correlation.end()) s.calls[op->second].self_cuda_us += us;
    else s.unattributed_cuda_us += us;
  }
  nest(s, std::move(allocations));
  return s;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void write_table(const std::string& path, const TrainConfig& config, TrainNorm norm, const Summary& s,
                 double step_loss) {
  struct Row {
    std::string name;
    int64_t calls = 0;
    double self_cuda_us = 0, cuda_us = 0, cpu_us = 0;
    int64_t alloc_bytes = 0;
  };
  std::map<std::string, Row> rows;
  for (const OpCall& c : s.calls) {
    Row& r = rows[c.name];
    r.name = c.name;
    ++r.calls;
    r.self_cuda_us += c.self_cuda_us;
    r.cuda_us += c.cuda_us;
    r.cpu_us += static_cast<double>(c.end - c.start) * 1e-3;
    r.alloc_bytes += c.alloc_bytes;
  }
  std::vector<Row> sorted;
  for (auto& [name, r] : rows) sorted.push_back(r);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Row& a, const Row& b) { return a.self_cuda_us > b.self_cuda_us; });
  if (sorted.size() > kTableRows) sorted.resize(kTableRows);
  int device = 0;
  SB_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  SB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::ostringstream o;
  o << "{\n  \"config\": " << json_string(config.name) << ",\n  \"impl\": " << json_string(train_norm_name(norm))
    << ",\n  \"gpu_name\": " << json_string(prop.name) << ",\n  \"torch_version\": " << json_string(TORCH_VERSION)
    << ",\n  \"tokens_per_step\": " << config.tokens_per_step() << ",\n  \"loss\": " << num(step_loss)
    << ",\n  \"step_cuda_us\": " << num(s.step_cuda_us)
    << ",\n  \"step_gpu_span_us\": " << num(s.last_ns > s.first_ns ? static_cast<double>(s.last_ns - s.first_ns) * 1e-3 : 0)
    << ",\n  \"norm_cuda_us\": " << num(s.norm_cuda_us)
    << ",\n  \"norm_cuda_share\": " << num(s.step_cuda_us > 0 ? s.norm_cuda_us / s.step_cuda_us : 0)
    << ",\n  \"unattributed_cuda_us\": " << num(s.unattributed_cuda_us) << ",\n  \"norm_ops\": [";
  bool first = true;
  for (const std::string& n : kNormOps) o << (first ? "" : ", ") << json_string(n), first = false;
  o << "],\n  \"ops\": [\n";
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const Row& r = sorted[i];
    o << "    {\"name\": " << json_string(r.name) << ", \"calls\": " << r.calls << ", \"self_cuda_us\": "
      << num(r.self_cuda_us) << ", \"cuda_us\": " << num(r.cuda_us) << ", \"cpu_us\": " << num(r.cpu_us)
      << ", \"cuda_alloc_bytes\": " << r.alloc_bytes << "}" << (i + 1 < sorted.size() ? "," : "") << "\n";
  }
  o << "  ]\n}\n";
  std::ofstream f(path);
  f << o.str();
  if (!f.good()) throw std::runtime_error("cannot write " + path);
}

// Warms a fresh model of `norm` up, profiles one step, writes its table and trace into `dir`.
void profile(const TrainConfig& config, TrainNorm norm, const std::string& dir, cudaStream_t stream) {
  Trainer trainer(config, norm, TrainPrecision::bf16_autocast, config.batch, kSeed, stream);
  for (int i = 0; i < kWarmUpSteps; ++i) trainer.step(stream);
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  const ProfilerConfig pc(ProfilerState::KINETO, /*report_input_shapes=*/false, /*profile_memory=*/true);
  const std::set<ActivityType> activities = {ActivityType::CPU, ActivityType::CUDA};
  prof::prepareProfiler(pc, activities);
  prof::enableProfiler(pc, activities);
  std::unique_ptr<prof::ProfilerResult> result;
  try {
    trainer.step(stream);
    SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  } catch (...) {
    prof::disableProfiler();
    throw;
  }
  result = prof::disableProfiler();
  const std::string impl = train_norm_name(norm);
  result->save(dir + "/train_trace_" + impl + ".json");
  const Summary s = summarize(result->events());
  write_table(dir + "/train_profile_" + impl + ".json", config, norm, s, trainer.last_loss(stream));
  std::printf("train_profile %s %s: step %.0f us of CUDA time, the norms %.0f us (%.1f%%); %s/train_profile_%s.json\n",
              config.name.c_str(), impl.c_str(), s.step_cuda_us, s.norm_cuda_us,
              s.step_cuda_us > 0 ? 100 * s.norm_cuda_us / s.step_cuda_us : 0.0, dir.c_str(), impl.c_str());
}

}  // namespace
}  // namespace sb::bench

int main(int argc, char** argv) {
  using namespace sb::bench;
  Args args;
  TrainConfig config;
  try {
    args = parse_args(argc, argv);
    config = train_config(args.config);
  } catch (const std::exception& e) {
    std::cerr << "train_profile: " << e.what() << "\n" << kUsage;
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::cerr << "train_profile: SKIPPED: no CUDA device\n";
    return 77;
  }
  try {
    std::filesystem::create_directories(args.out);
    cudaStream_t stream = nullptr;
    SB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (const TrainNorm norm : kTrainNorms) profile(config, norm, args.out, stream);
    SB_CUDA_CHECK(cudaStreamDestroy(stream));
  } catch (const std::exception& e) {
    std::cerr << "train_profile: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
