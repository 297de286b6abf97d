// bench_e2e's training-step cases (train_bench.h): one full step of train_model.h's model, PyTorch's norms
// against ours, timed cold.
//
// A case verifies its config first (verify_training: once per config, for both implementations), then builds a
// fresh model from the seed, runs kWarmUpSteps steps (AdamW's state is allocated at the first; cuBLAS and
// SDPA pick their kernels), reads the loss, resets the allocator's peak and times steps. A step is
// milliseconds (small) to a second (1b) of work with a host synchronization inside (clip_grad_norm_) and
// allocations from PyTorch's caching allocator, so it is timed cold only: a CUDA graph of it would need the
// optimizer and the loss captured as static buffers, a different program from the one a PyTorch user runs.
// The model is rebuilt in each repetition (the same weights and batches) and dropped at its end, so the
// device holds one model at a time and the layer cases that run between find their memory.
//
// Counters beside the harness's: tokens_per_s (batch x seq per step over the step's time), peak_mem_bytes
// (the caching allocator's peak of allocated bytes over the timed steps), loss (after the warm-up steps),
// sdpa_backend (at::_fused_sdp_choice's pick), parameters. TFLOP/s and sol_pct count the model FLOPs of
// TrainConfig::flops_per_step (so sol_pct is the step's model FLOP utilization against the GEMM ceiling);
// bytes is 0. err is the verification's error over its tolerance (train_model.h's TrainCheck).
#include "train_bench.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "harness/gbench.h"
#include "train_model.h"

namespace sb::bench {

namespace {

constexpr uint64_t kTrainSeed = 1;
constexpr int kWarmUpSteps = 3;

// f(), and where it runs out of device memory, make_room() and f() again: a model that does not fit beside
// what the binary keeps resident (bench_e2e's layers) gets the device to itself, as bench_e2e's layer_for
// does for a layer. Out of memory the second time is a skip (Unsupported): a GPU too small for the config.
template <typename F>
void with_room(const std::function<void()>& make_room, const char* what, F&& f) {
  try {
    f();
  } catch (const TrainOutOfMemory&) {
    make_room();
    try {
      f();
    } catch (const TrainOutOfMemory& e) {
      throw Unsupported(std::string(what) + " does not fit: " + e.what());
    }
  }
}

// The verification of `config`, run by the first of its cases and kept for every repetition of both.
const TrainCheck& verified(const TrainConfig& config, const std::function<void()>& make_room) {
  static std::map<std::string, TrainCheck> done;
  auto it = done.find(config.name);
  if (it == done.end())
    with_room(make_room, "the verification", [&] {
      it = done.emplace(config.name, verify_training(config, kTrainSeed, env().stream.get())).first;
    });
  return it->second;
}

void time_train_step(benchmark::State& st, const std::string& case_name, const TrainConfig& config, TrainNorm norm,
                     const std::function<void()>& make_room) {
  const TrainCheck& check = verified(config, make_room);
  if (!check.ok) return fail_case(st, case_name, "verification failed: " + check.message);
  const cudaStream_t stream = env().stream.get();
  std::unique_ptr<Trainer> trainer;
  double loss = 0;
  with_room(make_room, "the training step", [&] {
    trainer.reset();  // a model left from a try that ran out of memory goes first
    trainer = std::make_unique<Trainer>(config, norm, TrainPrecision::bf16_autocast, config.batch, kTrainSeed, stream);
    for (int i = 0; i < kWarmUpSteps; ++i) trainer->step(stream);
    loss = trainer->last_loss(stream);
  });
  const double tokens = static_cast<double>(trainer->tokens_per_step());
  const Counters counters = {{"loss", loss},
                             {"tokens_per_step", tokens},
                             {"parameters", static_cast<double>(config.parameters())},
                             {"sdpa_backend", static_cast<double>(trainer->sdpa_backend(stream))}};
  reset_peak_memory();
  Trainer& t = *trainer;
  run_timed(st, Mode::cold,
            Timed{case_name, [&t](cudaStream_t s) { t.step(s); }, capture_cuda_graph, 0.0, config.flops_per_step(),
                  norm == TrainNorm::torch ? check.torch_err : check.err, counters});
  st.counters["tokens_per_s"] = benchmark::Counter(tokens, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["peak_mem_bytes"] = static_cast<double>(peak_memory_bytes());
}

}  // namespace

void register_train_cases(const std::vector<TrainConfig>& configs, std::function<void()> make_room) {
  for (const TrainConfig& config : configs)
    for (const TrainNorm norm : kTrainNorms) {
      const std::string case_name =
          "e2e/train_step/" + std::string(train_norm_name(norm)) + "/bf16/" + config.name + "/cold";
      register_case(case_name, [=](benchmark::State& st) { time_train_step(st, case_name, config, norm, make_room); });
    }
}

}  // namespace sb::bench
