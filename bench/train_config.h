// The training step's model configurations and its synthetic task, for bench_e2e's training cases and
// train_profile (bench/train_model.h runs them). Plain C++ with no torch, so that the CPU tests check the
// parameter counts, the --shapes items and the task's determinism on any machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sb::bench {

// A Llama-style decoder-only model (embedding, `layers` pre-norm decoder layers of RMSNorm, q/k/v/o
// projections with RoPE and GQA attention, RMSNorm, SwiGLU MLP; a final RMSNorm and an LM head not tied to
// the embedding), trained on batches of `batch` sequences of `seq` tokens, and how its training is verified.
struct TrainConfig {
  std::string name;  // the config field of a case name: "small", "1b"
  int64_t layers, hidden, heads_q, heads_kv, head_dim, ffn, vocab, seq, batch;
  double lr;  // AdamW's constant learning rate
  // The verification (train_model.h, verify_training): `verify_steps` steps of `verify_batch` sequences
  // from one seed for each run, and the loss of the last step below `loss_drop` x the first step's.
  int64_t verify_batch, verify_steps;
  double loss_drop;

  // Every parameter: the embedding and the LM head (vocab x hidden each), per layer the four attention
  // projections, the three MLP matrices and two RMSNorm weights, and the final RMSNorm weight.
  int64_t parameters() const;
  // The parameters a token multiplies (the projections, the MLP and the LM head; not the embedding, a
  // lookup, nor the norms).
  int64_t matmul_parameters() const;
  int64_t tokens_per_step() const { return batch * seq; }
  // A step's model FLOPs: 6 x matmul_parameters() x tokens (forward 2, backward 4) plus causal attention's
  // 3 x 4 x head_dim x heads_q x seq (seq + 1) / 2 per sequence (forward QK^T and PV, backward twice that).
  // The norms, RoPE, SiLU, the loss and the optimizer are not counted.
  double flops_per_step() const;
};

// The named configs, in --help order: "small" (seconds to train, for tests and the smoke run) and "1b".
const std::vector<TrainConfig>& train_configs();
// The config called `name`; std::invalid_argument listing the names otherwise.
const TrainConfig& train_config(std::string_view name);

// bench_e2e's --shapes items that name training configs: "train" (every config), "train_<name>" (one),
// and "smoke" (the small one, beside the smoke set's layer shapes). Returns the configs a spec names, in
// train_configs() order, each once; other items (layer shapes and sets) are left to parse_layer_shapes.
std::vector<TrainConfig> train_configs_in_spec(const std::string& spec);

// The synthetic task: every sequence follows t[i + 1] = (a t[i] + b) mod kTaskTokens, with t[0], a and b
// drawn for each sequence (a from kTaskMultipliers, b from kTaskOffsets, t[0] uniform). A model learns first
// that only kTaskTokens of the vocabulary occur, then the 16 transitions a token can take, then to infer a
// and b from the tokens before: the loss falls from ln(vocab) towards 0 with structure at every stage.
inline constexpr int64_t kTaskTokens = 64;  // a power of two: x -> a x + b is a permutation for odd a
inline constexpr int64_t kTaskMultipliers[] = {1, 3, 5, 7};
inline constexpr int64_t kTaskOffsets[] = {1, 2, 3, 5};

// Batch `index` of the task for a model of `vocab` tokens (kTaskTokens <= vocab): `batch` rows of `seq` + 1
// tokens, row-major; a row's first seq tokens are the model's input and its last seq the targets. The same
// (seed, index) gives the same tokens on every machine (a splitmix64 stream). Throws std::invalid_argument
// for a non-positive batch or seq, or a vocab below kTaskTokens.
std::vector<int64_t> synthetic_batch(int64_t batch, int64_t seq, int64_t vocab, uint64_t seed, int64_t index);

}  // namespace sb::bench
