#include "train_config.h"

#include <iterator>
#include <stdexcept>

#include "harness/cli.h"

namespace sb::bench {

namespace {

// small: two layers of bench_e2e's smoke layer (hidden 256, 4 q / 2 kv heads of 64, the MLP at Llama's
// 8/3 x hidden rounded up to a multiple of 256): 2.1 M parameters, a step in milliseconds, dominated by the
// host's launches. Verified at its own batch over 30 steps; its loss falls to about half of ln(1024) by then,
// so the bar of 0.6 x the first loss leaves a margin of most of a nat.
//
// 1b: Llama-3.2-1B's depth and widths (16 layers, hidden 2048, MLP 8192, 8 kv heads) with heads of 128 (16 q
// heads), Llama 2's 32000-token vocabulary and an LM head of its own: 1.14 B parameters. Batch 8 x 2048
// tokens, what an 80 GB H100 holds with room to spare. Its memory, by what autocast and autograd keep
// (P = 1.14 B parameters, T = 16384 tokens):
//   fp32 weights, gradients and AdamW's two moments: 16 P = 18.2 GB;
//   the bf16 copies of the weights autocast makes and the projections save: 2 P = 2.3 GB;
//   saved activations, per token and layer: the residual stream in fp32 at both norms (16 KB), the bf16
//   norm outputs (8 KB), SDPA's q, k, v and output (12 KB), the MLP's gate, SiLU, up and product in bf16
//   (64 KB): 100 KB, x 16 layers x T = 26 GB;
//   the loss: the fp32 log-softmax over the vocabulary that cross-entropy saves (128 KB a token, 2.1 GB),
//   the bf16 logits and their fp32 upcast while it runs (3.1 GB);
// about 52 GB at the end of the forward, a few GB more as the backward starts, under the H100's 80 GB with
// cuBLAS and cuDNN workspaces and the allocator's rounding besides (peak_mem_bytes records what a step
// takes). Verified at batch 1 over 10 steps with the bar at 0.8 x the first loss: the task's 64 tokens of
// 32000 are learnt within a few steps, which takes the loss from ln(32000) to below half of it. At batch 1
// the fp32 run the tolerance comes from fits: it may compute attention with SDPA's math backend (fp32 rules
// out flash and cuDNN), whose scores at batch 8 would not fit beside the rest.
const std::vector<TrainConfig> kConfigs = {
    {"small", 2, 256, 4, 2, 64, 768, 1024, 256, 8, 1e-3, 8, 30, 0.6},
    {"1b", 16, 2048, 16, 8, 128, 8192, 32000, 2048, 8, 3e-4, 1, 10, 0.8},
};

// splitmix64 (Steele, Lea and Flood, 2014): a 64-bit state advanced by a constant, mixed on output. Fixed
// arithmetic, so the task's tokens are the same on every platform and library version.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
};

}  // namespace

int64_t TrainConfig::matmul_parameters() const {
  const int64_t q = heads_q * head_dim, kv = heads_kv * head_dim;
  return layers * (hidden * q * 2 + hidden * kv * 2 + 3 * hidden * ffn) + vocab * hidden;
}

int64_t TrainConfig::parameters() const {
  return matmul_parameters() + vocab * hidden + layers * 2 * hidden + hidden;
}

double TrainConfig::flops_per_step() const {
  const double tokens = static_cast<double>(tokens_per_step());
  const double pairs = static_cast<double>(seq) * static_cast<double>(seq + 1) / 2;
  const double attention = 3.0 * 4.0 * static_cast<double>(head_dim * heads_q * layers) * pairs * static_cast<double>(batch);
  return 6.0 * static_cast<double>(matmul_parameters()) * tokens + attention;
}

const std::vector<TrainConfig>& train_configs() { return kConfigs; }

const TrainConfig& train_config(std::string_view name) {
  std::string known;
  for (const TrainConfig& c : kConfigs) {
    if (c.name == name) return c;
    known += (known.empty() ? "" : ", ") + c.name;
  }
  throw std::invalid_argument("unknown training config '" + std::string(name) + "' (configs: " + known + ")");
}

std::vector<TrainConfig> train_configs_in_spec(const std::string& spec) {
  std::vector<bool> named(kConfigs.size(), false);
  for (const std::string& item : split_list(spec, "--shapes"))
    for (std::size_t i = 0; i < kConfigs.size(); ++i)
      if (item == "train" || item == "train_" + kConfigs[i].name || (item == "smoke" && kConfigs[i].name == "small"))
        named[i] = true;
  std::vector<TrainConfig> out;
  for (std::size_t i = 0; i < kConfigs.size(); ++i)
    if (named[i]) out.push_back(kConfigs[i]);
  return out;
}

std::vector<int64_t> synthetic_batch(int64_t batch, int64_t seq, int64_t vocab, uint64_t seed, int64_t index) {
  if (batch < 1 || seq < 1)
    throw std::invalid_argument("synthetic_batch: batch " + std::to_string(batch) + " and seq " + std::to_string(seq) +
                                " must be positive");
  if (vocab < kTaskTokens)
    throw std::invalid_argument("synthetic_batch: vocab " + std::to_string(vocab) + " is below the task's " +
                                std::to_string(kTaskTokens) + " tokens");
  std::vector<int64_t> tokens(static_cast<std::size_t>(batch * (seq + 1)));
  for (int64_t row = 0; row < batch; ++row) {
    // One stream per (seed, index, row), so a row's tokens do not depend on the batch size.
    SplitMix64 rng{seed ^ (0xD1B54A32D192ED03ull * static_cast<uint64_t>(index + 1)) ^
                   (0x8CB92BA72F3D8DD7ull * static_cast<uint64_t>(row + 1))};
    const int64_t a = kTaskMultipliers[rng.below(static_cast<int64_t>(std::size(kTaskMultipliers)))];
    const int64_t b = kTaskOffsets[rng.below(static_cast<int64_t>(std::size(kTaskOffsets)))];
    int64_t t = rng.below(kTaskTokens);
    int64_t* out = tokens.data() + row * (seq + 1);
    for (int64_t i = 0; i <= seq; ++i) {
      out[i] = t;
      t = (a * t + b) % kTaskTokens;
    }
  }
  return tokens;
}

}  // namespace sb::bench
