#include "layer_shapes.h"

#include <utility>

#include "harness/cli.h"
#include "train_config.h"

namespace sb::bench {

namespace {

struct Model {
  int64_t hidden, heads_q, heads_kv, head_dim, ffn;
};
// config.json of each model on the Hugging Face Hub: hidden_size, num_attention_heads,
// num_key_value_heads, head_dim (hidden_size / heads), intermediate_size.
constexpr Model kLlama3_8B = {4096, 32, 8, 128, 14336};
constexpr Model kLlama3_70B = {8192, 64, 8, 128, 28672};

LayerShape decode(const Model& m, int64_t batch, int64_t kv_len) {
  return {m.hidden, m.heads_q, m.heads_kv, m.head_dim, m.ffn, batch, 1, kv_len};
}
LayerShape prefill(const Model& m, int64_t batch, int64_t seq) {
  return {m.hidden, m.heads_q, m.heads_kv, m.head_dim, m.ffn, batch, seq, seq};
}

// Llama-3-8B at the ANCHORS.md decode shapes (the attention that bench_attention times alone), and
// Llama-3-70B (the same 8 kv heads, twice the q heads, 4x the weights a token) at one request and a batch.
const std::vector<LayerShape> kDecode = {
    decode(kLlama3_8B, 1, 4096),   decode(kLlama3_8B, 1, 32768), decode(kLlama3_8B, 1, 131072),
    decode(kLlama3_8B, 16, 8192),  decode(kLlama3_8B, 64, 4096), decode(kLlama3_8B, 64, 16384),
    decode(kLlama3_70B, 1, 32768), decode(kLlama3_70B, 64, 4096),
};
// Prompts: Llama-3-8B at 4k (one and four of them) and at 16k, Llama-3-70B at 4k.
const std::vector<LayerShape> kPrefill = {
    prefill(kLlama3_8B, 1, 4096),
    prefill(kLlama3_8B, 4, 4096),
    prefill(kLlama3_8B, 1, 16384),
    prefill(kLlama3_70B, 1, 4096),
};
// The layers bench_torch compiles by default (its "default" item): one request's and a batch's decode and one
// prompt of Llama-3-8B. A torch.compile of a layer takes tens of seconds a shape and dtype, so the Python rows
// run at these 3 of default's 12 (bench_e2e's C++ rows, which compile nothing, at all 12).
const std::vector<LayerShape> kCompiled = {decode(kLlama3_8B, 1, 4096), decode(kLlama3_8B, 64, 4096),
                                           prefill(kLlama3_8B, 1, 4096)};
// Tiny layers for the ctest smoke run: odd lengths (tails of every tile), GQA 2:1.
constexpr Model kTiny = {256, 4, 2, 64, 512};
const std::vector<LayerShape> kSmoke = {decode(kTiny, 2, 33), prefill(kTiny, 1, 17)};

const char* const kShapeForm = "h<hidden>_hq<heads_q>_hkv<heads_kv>_d<head_dim>_f<ffn>_b<batch>_q<q_len>_kv<kv_len>";

// bench_e2e's training configs share its --shapes (train_configs_in_spec): "train" and "train_<config>" are
// sets here too, of no layer shape, so that a spec of them alone runs no layer and an unknown item's error
// lists them.
const NamedSets<LayerShape>& sets() {
  static const NamedSets<LayerShape> s = [] {
    std::vector<std::pair<std::string, NamedSets<LayerShape>::Parts>> all = {
        {"default", {&kDecode, &kPrefill}}, {"decode", {&kDecode}}, {"prefill", {&kPrefill}}, {"smoke", {&kSmoke}},
        {"compiled", {&kCompiled}}, {"train", {}}};
    for (const TrainConfig& c : train_configs()) all.push_back({"train_" + c.name, {}});
    return NamedSets<LayerShape>(std::move(all));
  }();
  return s;
}

const std::vector<ShapeToken> kTokens = {
    {"h", "hidden", 65536}, {"hq", "heads_q", 1024}, {"hkv", "heads_kv", 1024}, {"d", "head_dim", 1024},
    {"f", "ffn", 1 << 20},  {"b", "batch", 4096},    {"q", "q_len", 1 << 20},   {"kv", "kv_len", 1 << 20},
};

LayerShape parse_one(const std::string& item) {
  const std::vector<long long> v = parse_shape_tokens(item, kTokens, kShapeForm, sets().names());
  const LayerShape s{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
  if (s.heads_q % s.heads_kv != 0)
    throw UsageError("--shapes: heads_q " + std::to_string(s.heads_q) + " is not a multiple of heads_kv " +
                     std::to_string(s.heads_kv) + " in '" + item + "'");
  if (s.q_len != 1 && s.q_len != s.kv_len)
    throw UsageError("--shapes: q_len " + std::to_string(s.q_len) + " with kv_len " + std::to_string(s.kv_len) +
                     " in '" + item + "': a layer shape is decode (q1) or prefill (q_len == kv_len)");
  return s;
}

}  // namespace

std::string LayerShape::name() const {
  return "h" + std::to_string(hidden) + "_hq" + std::to_string(heads_q) + "_hkv" + std::to_string(heads_kv) + "_d" +
         std::to_string(head_dim) + "_f" + std::to_string(ffn) + "_b" + std::to_string(batch) + "_q" +
         std::to_string(q_len) + "_kv" + std::to_string(kv_len);
}

int64_t LayerShape::weight_elements() const {
  const int64_t attn = hidden * heads_q * head_dim * 2 + hidden * heads_kv * head_dim * 2;  // q, o; k, v
  return attn + 3 * hidden * ffn + 2 * hidden;
}

int64_t LayerShape::unmasked_pairs() const { return decode() ? kv_len : q_len * (q_len + 1) / 2; }

std::size_t LayerShape::bytes(DType dtype) const {
  const int64_t tokens = batch * q_len;
  const int64_t elements = weight_elements() + 2 * tokens * hidden + 2 * batch * kv_len * heads_kv * head_dim;
  return static_cast<std::size_t>(elements) * size_bytes(dtype);
}

std::size_t LayerShape::rest_bytes(DType dtype) const {
  const int64_t cached = 2 * batch * (kv_len - q_len) * heads_kv * head_dim;
  return bytes(dtype) - static_cast<std::size_t>(cached) * size_bytes(dtype);
}

double LayerShape::projection_flops() const {
  return 2.0 * static_cast<double>(batch * q_len) * static_cast<double>(weight_elements() - 2 * hidden);
}

double LayerShape::flops() const {
  const double attention = 4.0 * static_cast<double>(head_dim) * static_cast<double>(heads_q) *
                           static_cast<double>(batch) * static_cast<double>(unmasked_pairs());
  return projection_flops() + attention;
}

std::vector<LayerShape> layer_shape_set(const std::string& name) { return sets().get(name); }

std::vector<LayerShape> parse_layer_shapes(const std::string& spec) { return parse_shape_spec(spec, sets(), parse_one); }

std::string layer_shapes_grammar() {
  std::string train;
  for (const TrainConfig& c : train_configs()) train += ", train_" + c.name;
  return "                  SPEC is a comma-separated list of named sets and shapes, each shape written\n"
         "                  as its case name: h<hidden>_hq<heads_q>_hkv<heads_kv>_d<head_dim>_f<ffn>\n"
         "                  _b<batch>_q<q_len>_kv<kv_len> (one word, every token, in this order): one\n"
         "                  Llama-style decoder layer (ffn: the MLP's intermediate size), heads_q a\n"
         "                  multiple of heads_kv, q_len 1 (decode: one new token against a KV cache of\n"
         "                  kv_len) or q_len = kv_len (prefill, causal). Sets: decode (Llama-3-8B at the\n"
         "                  ANCHORS.md decode shapes, Llama-3-70B), prefill (4k and 16k prompts),\n"
         "                  default (decode + prefill), smoke (with the small training step).\n"
         "                  Training steps (bf16 only, in no set but smoke's and train's): train (every\n"
         "                  config)" + train + ".\n"
         "                  Example: --shapes=decode,h5120_hq40_hkv8_d128_f17408_b8_q1_kv8192\n";
}

}  // namespace sb::bench
