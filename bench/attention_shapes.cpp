#include "attention_shapes.h"

#include <algorithm>
#include <array>

#include "harness/cli.h"

namespace sb::bench {

namespace {

AttentionShape prefill(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t head_dim, int64_t seq, bool causal) {
  return {batch, heads_q, heads_kv, head_dim, seq, seq, causal};
}
// One new token per sequence against a KV cache of kv_len: it sees the whole cache, so no mask.
AttentionShape decode(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t head_dim, int64_t kv_len) {
  return {batch, heads_q, heads_kv, head_dim, 1, kv_len, false};
}

// ANCHORS.md, in its order. Prefill rows are (B, H, S, D) with MHA (heads_kv = heads_q); decode rows
// are (batch, KV length) with 32 q heads, 8 kv heads, D 128 (Llama-3-8B).
const std::vector<AttentionShape> kAnchors = {
    prefill(4, 32, 32, 128, 4096, true),   // hidden 4096 as MHA (Llama-2-7B; Llama-3-8B sans GQA)
    prefill(1, 32, 32, 128, 16384, true),  // the same at 16k
    prefill(16, 16, 16, 64, 1024, true),   // head dim 64 x 16 heads: hidden 1024 (GPT-2 medium)
    prefill(4, 32, 32, 128, 4096, false),  // the first row, unmasked
    decode(1, 32, 8, 128, 4096),           // Llama-3-8B, one request
    decode(1, 32, 8, 128, 32768),          // one request, long context
    decode(1, 32, 8, 128, 131072),         // one request at the longest context (Llama-3.1: 128k)
    decode(16, 32, 8, 128, 8192),          // Llama-3-8B serving batches
    decode(64, 32, 8, 128, 4096),          // batch 64, short context
    decode(64, 32, 8, 128, 16384),         // batch 64, long context
};

std::vector<AttentionShape> make_prefill_set() {
  std::vector<AttentionShape> s;
  // The FlashAttention papers' benchmark convention (FA2 / FA3 figures): batch x seq = 16k tokens,
  // hidden 2048, MHA, as head dim 64 x 32 heads and head dim 128 x 16 heads; seq 512 to 16k.
  const std::array<std::array<int64_t, 2>, 6> batch_seq = {
      {{32, 512}, {16, 1024}, {8, 2048}, {4, 4096}, {2, 8192}, {1, 16384}}};
  for (bool causal : {true, false})
    for (const auto& hd : std::array<std::array<int64_t, 2>, 2>{{{32, 64}, {16, 128}}})
      for (const auto& bs : batch_seq) s.push_back(prefill(bs[0], hd[0], hd[0], hd[1], bs[1], causal));
  // Llama-3-8B (32 q heads, 8 kv heads, head dim 128), causal, 16k tokens per batch as above:
  // 2k-token prompts and its full 8k context.
  s.push_back(prefill(8, 32, 8, 128, 2048, true));
  s.push_back(prefill(2, 32, 8, 128, 8192, true));
  // ANCHORS.md prefill rows (MHA; models in kAnchors).
  for (const auto& a : kAnchors)
    if (!a.decode()) s.push_back(a);
  return s;
}

std::vector<AttentionShape> make_decode_set() {
  std::vector<AttentionShape> s;
  // Llama-3-8B, GQA (32 q heads, 8 kv heads, head dim 128): one long request (split-KV territory),
  // a few long-context requests, and serving batches of 16 to 256 at shorter caches. Includes every
  // ANCHORS.md decode row.
  for (int64_t kv : {1024, 4096, 16384, 32768, 131072}) s.push_back(decode(1, 32, 8, 128, kv));
  s.push_back(decode(4, 32, 8, 128, 131072));
  s.push_back(decode(16, 32, 8, 128, 8192));
  s.push_back(decode(16, 32, 8, 128, 32768));
  s.push_back(decode(64, 32, 8, 128, 4096));
  s.push_back(decode(64, 32, 8, 128, 16384));
  s.push_back(decode(256, 32, 8, 128, 1024));
  s.push_back(decode(256, 32, 8, 128, 4096));
  s.push_back(decode(256, 32, 8, 128, 16384));
  // The same dimensions as MHA (32 q heads = 32 kv heads, head dim 128: Llama-2-7B): 4x the KV
  // bytes per token and no reuse of a KV head across q heads.
  for (int64_t kv : {4096, 32768, 131072}) s.push_back(decode(1, 32, 32, 128, kv));
  s.push_back(decode(16, 32, 32, 128, 8192));
  s.push_back(decode(64, 32, 32, 128, 4096));
  s.push_back(decode(64, 32, 32, 128, 16384));
  s.push_back(decode(256, 32, 32, 128, 1024));
  // Llama-3-70B (64 q heads on the same 8 kv heads): bench_e2e's two 70B decode layers. Twice the q rows
  // a kv head (8: decode_splitk's 8-row tensor-core blocks, where the 8B shapes run 4-row ones) for the
  // same K and V bytes.
  s.push_back(decode(1, 64, 8, 128, 32768));
  s.push_back(decode(64, 64, 8, 128, 4096));
  return s;
}

const std::vector<AttentionShape> kPrefill = make_prefill_set();
const std::vector<AttentionShape> kDecode = make_decode_set();

// Tiny cases for the ctest smoke run: odd lengths (tails of every tile), GQA, and a causal problem
// with q_len > kv_len whose first rows attend no key (they output 0).
const std::vector<AttentionShape> kSmoke = {
    {1, 4, 2, 64, 17, 17, true},   // prefill, causal, GQA 2:1
    {2, 4, 1, 128, 1, 33, false},  // decode, GQA 4:1
    {1, 2, 1, 64, 5, 3, true},     // prefill (q_len > kv_len), bottom-right causal: rows 0 and 1 fully masked
};

// The shape classes the attention tests of FlashAttention, FlashInfer and vLLM use beside model sizes: a
// correctness set (every variant runs it in tests/test_attention_gpu.cpp), not a performance workload.
const std::vector<AttentionShape> kEdge = {
    // tiny: one query against one key
    {1, 1, 1, 64, 1, 1, false},
    {1, 1, 1, 64, 1, 1, true},
    {1, 1, 1, 128, 1, 1, false},
    // q_len < kv_len (FlashAttention's length pairs): causal row i sees keys 0 .. i + kv_len - q_len
    {1, 4, 1, 64, 113, 203, true},
    {2, 4, 4, 128, 127, 512, false},
    {1, 8, 2, 64, 1023, 1024, true},
    // q_len > kv_len: causal rows 0 .. q_len - kv_len - 1 see no key and output 0; kv_len 1
    {1, 4, 1, 128, 256, 129, true},
    {2, 4, 2, 64, 256, 129, false},
    {1, 3, 1, 64, 17, 1, true},
    {1, 4, 2, 128, 17, 1, false},
    // small odd head counts: 3 q heads on 1 kv head, 6 on 3 (GQA 2:1 over an odd kv head count)
    {1, 3, 1, 64, 113, 113, true},
    {2, 3, 1, 128, 77, 77, false},
    {1, 6, 3, 64, 200, 100, true},
    {2, 6, 3, 128, 129, 129, true},
    // decode (FlashInfer, vLLM): odd batch sizes against KV lengths that are no multiple of any tile
    {3, 32, 8, 128, 1, 1, false},
    {5, 6, 3, 64, 1, 17, false},
    {7, 3, 1, 128, 1, 127, false},
    {3, 32, 8, 128, 1, 1000, false},
    {5, 6, 3, 128, 1, 4095, false},
    {7, 32, 8, 64, 1, 8193, false},
    // speculative tokens against short caches, causal
    {3, 6, 3, 128, 3, 17, true},
    {5, 32, 8, 128, 8, 127, true},
    // one very long KV cache (batch 1)
    {1, 8, 1, 128, 1, 262144, false},
};

constexpr long long kMaxBatch = 65536;
constexpr long long kMaxHeads = 1024;
constexpr long long kMaxHeadDim = 1024;
constexpr long long kMaxLen = 1LL << 20;

const char* const kShapeForm = "b<batch>_hq<heads_q>_hkv<heads_kv>_d<head_dim>_q<q_len>_kv<kv_len>[_causal]";

const NamedSets<AttentionShape>& sets() {
  static const NamedSets<AttentionShape> s({{"default", {&kPrefill, &kDecode}},
                                            {"prefill", {&kPrefill}},
                                            {"decode", {&kDecode}},
                                            {"anchors", {&kAnchors}},
                                            {"smoke", {&kSmoke}},
                                            {"edge", {&kEdge}}});
  return s;
}

// In the order a shape is written.
const std::vector<ShapeToken> kTokens = {
    {"b", "batch", kMaxBatch},
    {"hq", "heads_q", kMaxHeads},
    {"hkv", "heads_kv", kMaxHeads},
    {"d", "head_dim", kMaxHeadDim},
    {"q", "q_len", kMaxLen},
    {"kv", "kv_len", kMaxLen},
    {"causal", "causal", 0},
};

AttentionShape parse_one(const std::string& item) {
  const std::vector<long long> v = parse_shape_tokens(item, kTokens, kShapeForm, sets().names());
  const AttentionShape s{v[0], v[1], v[2], v[3], v[4], v[5], v[6] != 0};
  if (s.heads_q % s.heads_kv != 0)
    throw UsageError("--shapes: heads_q " + std::to_string(s.heads_q) + " is not a multiple of heads_kv " +
                     std::to_string(s.heads_kv) + " in '" + item + "'");
  return s;
}

}  // namespace

std::string AttentionShape::workload() const { return decode() ? "decode" : "prefill"; }

std::string AttentionShape::name() const {
  return "b" + std::to_string(batch) + "_hq" + std::to_string(heads_q) + "_hkv" + std::to_string(heads_kv) + "_d" +
         std::to_string(head_dim) + "_q" + std::to_string(q_len) + "_kv" + std::to_string(kv_len) +
         (causal ? "_causal" : "");
}

std::vector<AttentionShape> attention_shape_set(const std::string& name) { return sets().get(name); }

std::vector<AttentionShape> parse_attention_shapes(const std::string& spec) {
  return parse_shape_spec(spec, sets(), parse_one);
}

std::string attention_shapes_grammar() {
  return "                  SPEC is a comma-separated list of named sets and shapes, each shape written\n"
         "                  as its case name: b<batch>_hq<heads_q>_hkv<heads_kv>_d<head_dim>_q<q_len>\n"
         "                  _kv<kv_len>[_causal] (one word, every token, in this order), heads_q a\n"
         "                  multiple of heads_kv (GQA). A shape is decode when q_len <= 16 and\n"
         "                  kv_len > q_len, else prefill; causal masking with q_len != kv_len is\n"
         "                  bottom-right aligned. Sets: prefill (seq 512 to 16k, FlashAttention's\n"
         "                  16k-token convention and Llama-3-8B), decode (q_len 1, Llama-3-8B GQA and\n"
         "                  MHA, batch 1 to 256, KV 1k to 128k; Llama-3-70B GQA at b1 KV 32k and b64\n"
         "                  KV 4k), default (prefill + decode), anchors\n"
         "                  (the shapes of ANCHORS.md), smoke, edge (correctness classes: q_len != kv_len\n"
         "                  both ways, q_len or kv_len 1, 3 and 6 q heads, odd decode batches, KV\n"
         "                  lengths off every tile, KV 262144).\n"
         "                  Example: --shapes=anchors,b8_hq64_hkv8_d128_q1_kv32768\n";
}

}  // namespace sb::bench
