// Decode attention the way a serving engine runs it: a batch of sequences of their own lengths whose K and V
// live in a paged cache, addressed through a block table. O = softmax(scale * Q K^T + mask) V per sequence
// and query head, GQA as attention.h (q head h reads kv head h / (heads_q / heads_kv)).
//
// Memory layout:
//   Q, O:        [batch, q_len, heads_q, head_dim], contiguous (attention.h's layout)
//   K, V pools:  [num_pages, page_size, heads_kv, head_dim], contiguous, in dtype or FP8 e4m3 (kv_cache):
//                vLLM's paged cache. A page holds
//                page_size tokens, each token's heads side by side, so a key row is laid out as in the
//                contiguous cache (attention.h's [batch, kv_len, heads_kv, head_dim]): a contiguous cache
//                is a paged one whose pages of one sequence are adjacent, and the paged kernel's loads of
//                one key are the contiguous kernel's.
//   block_table: [batch, max_pages], int32: token t of sequence b is row t % page_size of page
//                block_table[b][t / page_size]. Entries past a sequence's last page are not read.
//   seq_lens:    [batch], int32: the KV length of each sequence, 1 <= seq_lens[b] <= max_pages * page_size.
// The lengths are given twice: on the device, where the kernels read them, and on the host, where the plan
// (how a batch's work is split over the SMs) reads them without a device synchronization.
// With q_len > 1 (speculative decoding) and causal, masking is bottom-right aligned per sequence: query row i
// of sequence b attends key j iff j <= i + (seq_lens[b] - q_len).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/dtype.h"

namespace sb::paged_attention {

inline constexpr int64_t kMaxQLen = 8;  // query tokens a sequence (decode, or speculative decoding)

// How the pools store K and V: in the problem's dtype, or as FP8 e4m3 bytes (OCP E4M3FN, vLLM's
// kv_cache_dtype="fp8") whose values times k_scale and v_scale (per tensor) are the cache's. Q and O stay in
// the problem's dtype either way.
enum class KvCache { dtype, fp8_e4m3 };

struct Problem {
  int64_t batch = 0;
  int64_t heads_q = 0;
  int64_t heads_kv = 0;
  int64_t head_dim = 0;
  int64_t q_len = 1;
  int64_t page_size = 0;    // tokens a page
  int64_t num_pages = 0;    // pages in each pool
  int64_t max_pages = 0;    // block table entries a sequence (its row length)
  bool causal = true;
  double scale = 0;         // softmax scale; 0 means 1 / sqrt(head_dim)
  DType dtype = DType::bf16;
  KvCache kv_cache = KvCache::dtype;
  float k_scale = 1.0f, v_scale = 1.0f;    // an FP8 cache's dequantization scales (unused otherwise)
  const int32_t* seq_lens_host = nullptr;  // [batch], host
  const int32_t* seq_lens = nullptr;       // [batch], device: the same values
  const int32_t* block_table = nullptr;    // [batch, max_pages], device
  const void* q = nullptr;
  const void* k_pages = nullptr;
  const void* v_pages = nullptr;
  void* o = nullptr;
  void* workspace = nullptr;  // at least the variant's workspace_bytes(problem), 256-byte aligned
  std::size_t workspace_size = 0;
  int64_t num_splits = 0;     // 0: the variant's plan; else this many splits of every sequence

  double softmax_scale() const;
  int64_t total_keys() const;  // the sum of seq_lens_host
  int64_t max_seq_len() const;
  // Query-key pairs not masked, over the batch, per query head.
  int64_t unmasked_pairs() const;
  // 4 * head_dim FLOPs per unmasked pair and query head (Q K^T and P V).
  double flops() const;
  // Bytes of one element of K or V in the pools: 1 for an FP8 cache, else the dtype's.
  std::size_t kv_element_bytes() const;
  // The K and V a decode step must read: every sequence's own keys, once (not the pages' unused rows, not
  // a padded batch's).
  std::size_t kv_bytes() const;
  // kv_bytes() plus reading Q and writing O.
  std::size_t bytes() const;
  // Throws std::invalid_argument naming the offending field: sizes, head counts, dtype, null pointers,
  // a length outside [1, max_pages * page_size]. The block table's entries live on the device and are the
  // caller's to keep inside [0, num_pages).
  void validate() const;
};

struct Variant {
  const char* name;
  const char* summary;
  std::string (*supports)(const Problem&);         // "" or the reason it cannot run a valid problem
  std::size_t (*workspace_bytes)(const Problem&);  // device scratch it needs in problem.workspace
  void (*launch)(const Problem&, cudaStream_t);    // never allocates, synchronizes, prints or reads a clock
};

const std::vector<Variant>& variants();  // kernels/paged_attention/variants.def, in teaching order
const Variant& variant(const std::string& name);
// The last variant in teaching order that supports p; std::invalid_argument for an invalid problem or, with
// every variant's reason, one that none supports.
const Variant& best_variant(const Problem& p);
// validate(), supports() (unsupported: std::invalid_argument with the reason), a workspace check, launch().
void run(const Variant& v, const Problem& p, cudaStream_t stream);

}  // namespace sb::paged_attention
