// paged_splitk: decode over a paged KV cache, every sequence of its own length. The kernel is decode_splitk's
// tensor-core split kernel (kernels/attention/decode_splitk_tc.cu) in its paged form: a block's key rows come
// through the block table (one table read per lane per tile: a lane's 4 or 8 consecutive rows never cross a
// page of a multiple of 16 keys), its sequence's length from seq_lens. The split follows the batch's lengths
// (plan.h: one chunk length, each sequence in ceil(len / chunk) chunks), so a long sequence among short ones
// is cut and the short ones are not; the grid has the longest sequence's chunk count, and a shorter
// sequence's last splits find no key and write an empty partial, which decode_splitk's combine ignores.
// Traffic: each sequence's own K and V once (not a padded batch's), Q and O once, partials where split.
// Over an FP8 (e4m3) cache the same kernel copies e4m3 bytes (half the traffic) and widens each tile to the
// dtype in shared memory before the MMAs; k_scale rides on the softmax scale, v_scale on the output.
// Constraints: fp16/bf16, head_dim 64 or 128, GQA with 2 to 8 query rows a kv head (the tensor-core plans),
// pages of a multiple of 16 keys, 16-byte aligned Q and pools.
#include <string>
#include <utility>

#include "attention/decode_splitk.h"
#include "common/device.h"
#include "common/vec.cuh"
#include "paged_attention/paged_attention.h"
#include "paged_attention/plan.h"

namespace sb::paged_attention::paged_splitk {

namespace {

// The problem as decode_splitk reads it: kv_len the longest sequence, K and V the pools.
attention::Problem as_contiguous(const Problem& p) {
  attention::Problem c;
  c.batch = p.batch;
  c.heads_q = p.heads_q;
  c.heads_kv = p.heads_kv;
  c.head_dim = p.head_dim;
  c.q_len = p.q_len;
  c.kv_len = p.max_seq_len();
  c.causal = p.causal;
  c.scale = p.scale;
  c.dtype = p.dtype;
  c.q = p.q;
  c.k = p.k_pages;
  c.v = p.v_pages;
  c.o = p.o;
  c.workspace = p.workspace;
  c.workspace_size = p.workspace_size;
  return c;
}

// decode_splitk's plan for the rows and kernel, with the split of plan_splits over the batch's lengths and no
// clusters (their merge and pairing assume one length).
attention::decode_splitk::Plan plan_for(const Problem& p, const attention::Problem& c, int sm_count) {
  namespace ds = attention::decode_splitk;
  ds::Plan plan = ds::make_plan(c, sm_count);
  const SplitPlan split = plan_splits(p.seq_lens_host, p.batch, p.heads_kv * plan.row_blocks, plan.tile_keys,
                                      static_cast<int64_t>(sm_count) * plan.blocks_per_sm, ds::kMinSplitKeys,
                                      p.num_splits);
  plan.chunk_keys = split.chunk_keys;
  plan.num_splits = static_cast<int>(split.max_splits);
  plan.cluster_combine = false;
  plan.paired_clusters = false;
  return plan;
}

}  // namespace

std::string supports(const Problem& p) {
  namespace ds = attention::decode_splitk;
  if (p.dtype == DType::f32) return "fp32 is not supported (the tensor-core kernel takes fp16 or bf16)";
  if (p.head_dim != 64 && p.head_dim != 128)
    return "head_dim " + std::to_string(p.head_dim) + " is not supported (64 or 128: the tensor-core kernel)";
  const attention::Problem c = as_contiguous(p);
  if (!ds::make_plan(c, 1).tensor_cores)  // the kernel does not depend on the SM count
    return "MHA with 1 or 2 query rows a kv head runs decode_splitk's FMA kernel, which has no paged form";
  if (p.page_size % 16 != 0)
    return "page_size " + std::to_string(p.page_size) + " is not a multiple of 16 (a lane's key rows in one page)";
  for (auto [ptr, name] :
       {std::pair<const void*, const char*>{p.q, "q"}, {p.k_pages, "k_pages"}, {p.v_pages, "v_pages"}})
    if (!is_aligned(ptr, 16)) return std::string(name) + " is not 16-byte aligned (16-byte loads)";
  if (p.workspace && !is_aligned(p.workspace, 16)) return "workspace is not 16-byte aligned";
  return ds::supports(c);
}

std::size_t workspace_bytes(const Problem& p) {
  if (!supports(p).empty()) return 0;
  const attention::Problem c = as_contiguous(p);
  return attention::decode_splitk::workspace_bytes(plan_for(p, c, device_sm_count()), c);
}

void launch(const Problem& p, cudaStream_t stream) {
  const attention::Problem c = as_contiguous(p);
  const auto plan = plan_for(p, c, device_sm_count());
  attention::decode_splitk::launch_paged(
      c, plan,
      {p.seq_lens, p.block_table, p.page_size, p.max_pages, p.kv_cache == KvCache::fp8_e4m3, p.k_scale, p.v_scale},
      stream);
}

}  // namespace sb::paged_attention::paged_splitk
