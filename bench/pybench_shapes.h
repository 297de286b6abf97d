// bench_torch's --shapes: one SPEC for the RMSNorm-family cases and the attention cases of one process, each
// item read by the grammar of every op that reads it (plain C++, unit-tested on any machine).
#pragma once

#include <string>
#include <vector>

#include "attention_shapes.h"
#include "layer_shapes.h"
#include "paged_shapes.h"
#include "rmsnorm_shapes.h"

namespace sb::bench {

struct PyShapes {
  std::vector<RmsNormShape> rmsnorm;      // for rmsnorm, fused_add_rmsnorm and rmsnorm_backward
  std::vector<AttentionShape> attention;  // for attention
  std::vector<PagedShape> paged;          // for attention over a paged KV cache (paged_shapes.h)
  std::vector<LayerShape> layer;          // for the decoder layer (bench_e2e's e2e cases)
};

// Each comma-separated item of SPEC goes to the RMSNorm shapes if parse_rmsnorm_shapes reads it, to the
// attention shapes if parse_attention_shapes reads it, to the paged shapes if parse_paged_shapes reads it and
// to the layer shapes if parse_layer_shapes reads it: a set several have goes to each (default and smoke to
// all but the paged ones, anchors and edge to RMSNorm and attention, decode and prefill to attention and the
// layer), "4096x8192" to RMSNorm only, "b1_hq32_hkv8_d128_q1_kv4096" to attention only, "paged" and
// "b4_hq32_hkv8_d128_q1_kv4096_p16_zipf" to the paged shapes only, "h4096_hq32_hkv8_d128_f14336_b1_q1_kv4096"
// to the layer only (its sets "train" and "train_<config>" name no layer shape). For the layer, "default" reads
// as its set "compiled" (3 shapes): each layer shape is a torch.compile of tens of seconds. Each list keeps the first of duplicates, in order. An item none reads is a
// UsageError that gives every reason; so is an empty SPEC (empty items are dropped, as split_list drops them
// for the C++ binaries).
PyShapes parse_pybench_shapes(const std::string& spec);

// The shapes as JSON, each with its case-name field and its dimensions (attention: its workload too):
// {"rmsnorm": [{"name": "t1_h4096", "rows": 1, "hidden": 4096}, ...], "attention": [{"name": ..., "workload":
// "decode", "batch": 1, "heads_q": 32, "heads_kv": 8, "head_dim": 128, "q_len": 1, "kv_len": 4096, "causal":
// false}, ...], "paged": [{"name": ..., the attention fields (kv_len: the longest sequence), "page_size": 16,
// "lengths": [every sequence's keys, PagedShape::lengths()]}, ...], "layer": [{"name": ..., "workload": ...,
// "hidden", "heads_q", "heads_kv", "head_dim", "ffn", "batch", "q_len", "kv_len"}, ...]}.
std::string pybench_shapes_json(const PyShapes& shapes);

}  // namespace sb::bench
