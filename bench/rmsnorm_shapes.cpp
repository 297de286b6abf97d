#include "rmsnorm_shapes.h"

#include <algorithm>

#include "harness/cli.h"

namespace sb::bench {

namespace {

// rows = tokens in the batch (decode: one per sequence; prefill: batch x sequence length).
const std::vector<RmsNormShape> kAnchors = {
    {1, 4096}, {64, 8192}, {2048, 2048}, {4096, 4096}, {16384, 4096}, {32768, 8192}, {65536, 1024},
};

const std::vector<RmsNormShape> kDefault = {
    {1, 4096},      // Llama-3-8B, decode of one sequence
    {1, 8192},      // Llama-3-70B, decode of one sequence
    {64, 8192},     // Llama-3-70B, decode of 64 sequences
    {256, 4096},    // Llama-3-8B, decode of 256 sequences
    {8192, 768},    // GPT-2 small, 8 x 1k-token prefill
    {2048, 2048},   // Llama-3.2-1B, 2k-token prefill
    {4096, 4096},   // Llama-3-8B, 4k-token prefill
    {16384, 4096},  // Llama-3-8B, 16k tokens
    {4096, 16384},  // Llama-3.1-405B, 4k tokens
    {32768, 8192},  // Llama-3-70B, 32k tokens
    {65536, 1024},  // Qwen3-0.6B, 64k tokens
    {65536, 4096},  // Llama-3-8B, 64k tokens
};

// Tiny cases for the ctest smoke run: a tail (hidden 7) and a vector path.
const std::vector<RmsNormShape> kSmoke = {{3, 7}, {2, 1024}};

// The shape classes the RMSNorm tests of vLLM, FlashInfer, Liger-Kernel and QuACK use beside model sizes: a
// correctness set (every variant runs it in tests/test_rmsnorm_gpu.cpp), not a performance workload.
const std::vector<RmsNormShape> kEdge = {
    // hidden odd or not a multiple of 8 (16-bit 16-byte vectors; 5124 takes fp32 ones): scalar paths and tails
    {1, 1}, {1, 7}, {3, 127}, {17, 769}, {4, 770}, {2, 5123}, {5, 5124}, {7, 8199},
    // many rows of an odd hidden size (more than 256 rows: the bandwidth regime, scalar)
    {615, 123}, {1269, 213},
    // a few rows of model sizes
    {2, 4096}, {3, 5120}, {17, 4096},
    // hidden sizes that are multiples of 8 but not powers of two, at odd row counts
    {37, 760}, {199, 1128},
    // very wide rows: past any register- or shared-memory-resident row (two passes over x)
    {1, 262144}, {37, 262144}, {1, 1048576}, {3, 1048576}, {2, 1048573},
};

const NamedSets<RmsNormShape>& sets() {
  static const NamedSets<RmsNormShape> s(
      {{"default", {&kDefault}}, {"anchors", {&kAnchors}}, {"smoke", {&kSmoke}}, {"edge", {&kEdge}}});
  return s;
}

constexpr long long kMaxRows = 0x7fffffffLL;
constexpr long long kMaxHidden = 1LL << 30;

RmsNormShape parse_one(const std::string& item) {
  std::string rows, hidden;
  if (const auto x = item.find('x'); x != std::string::npos) {
    rows = item.substr(0, x);
    hidden = item.substr(x + 1);
  } else if (item.size() > 1 && item[0] == 't' && item.find("_h") != std::string::npos) {
    const auto h = item.find("_h");
    rows = item.substr(1, h - 1);
    hidden = item.substr(h + 2);
  } else {
    throw UsageError("--shapes: '" + item +
                     "' is neither a shape (ROWSxHIDDEN like 4096x8192, or t4096_h8192) nor a named set (" +
                     sets().names() + ")");
  }
  return {parse_int(rows, 1, kMaxRows, "--shapes: rows in '" + item + "'"),
          parse_int(hidden, 1, kMaxHidden, "--shapes: hidden in '" + item + "'")};
}

}  // namespace

std::string RmsNormShape::name() const { return "t" + std::to_string(rows) + "_h" + std::to_string(hidden); }

std::vector<RmsNormShape> rmsnorm_shape_set(const std::string& name) { return sets().get(name); }

std::vector<RmsNormShape> parse_rmsnorm_shapes(const std::string& spec) {
  return parse_shape_spec(spec, sets(), parse_one);
}

std::string rmsnorm_shapes_grammar() {
  return "                  SPEC is a comma-separated list of shapes ROWSxHIDDEN (or tROWS_hHIDDEN)\n"
         "                  and named sets: default (1 to 64k tokens, Llama-3 / GPT-2 / Qwen3 sizes),\n"
         "                  anchors (the shapes of ANCHORS.md), smoke, edge (correctness classes: hidden\n"
         "                  odd or not a multiple of 8, 1 to 17 rows, rows of 262144 and 1048576).\n"
         "                  Example: --shapes=anchors,8x5120\n";
}

}  // namespace sb::bench
