#include "paged_case.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "common/check.h"
#include "harness/fill.h"

namespace sb::bench {

namespace {

// One sequence's K (or V) as the pools hold it: its own ([len, heads_kv, head_dim] in the dtype), or over an FP8
// cache the e4m3 bytes of its values, written into `scratch`.
const void* cached_kv(const attention::Problem& one, bool v, paged_attention::KvCache cache, DeviceBuffer& scratch,
                      cudaStream_t stream) {
  const void* own = v ? one.v : one.k;
  if (cache != paged_attention::KvCache::fp8_e4m3) return own;
  const std::size_t n = one.kv_bytes() / 2 / size_bytes(one.dtype);
  scratch = DeviceBuffer(n);
  to_e4m3(own, n, one.dtype, v ? kFp8VScale : kFp8KScale, scratch.get(), stream);
  return scratch.get();
}

}  // namespace

std::size_t paged_kv_read_workspace_bytes(const paged_attention::Problem& p) {
  return sizeof(unsigned) * static_cast<std::size_t>(p.batch * p.max_pages);
}

void launch_paged_kv_read(const paged_attention::Problem& p, cudaStream_t stream) {
  if (p.workspace_size < paged_kv_read_workspace_bytes(p))
    throw std::invalid_argument("ref_kv_read: the workspace holds fewer words than its blocks write");
  paged_read_sum_kernel(p.k_pages, p.v_pages, p.block_table, p.seq_lens, p.batch, p.max_pages, p.page_size,
                        static_cast<std::size_t>(p.heads_kv * p.head_dim) * p.kv_element_bytes(),
                        static_cast<unsigned*>(p.workspace), stream);
}

PagedData::PagedData(const PagedDims& s, DType dtype, const std::vector<int64_t>& lens, int64_t page_size,
                     uint64_t seed, cudaStream_t stream, paged_attention::KvCache kv_cache)
    : stream_(stream) {
  const bool fp8 = kv_cache == paged_attention::KvCache::fp8_e4m3;
  const auto batch = static_cast<int64_t>(lens.size());
  const std::size_t elem = size_bytes(dtype), row_elems = static_cast<std::size_t>(s.heads_kv * s.head_dim);
  const std::size_t row = row_elems * (fp8 ? 1 : elem);  // a key row's bytes in the pools
  const std::size_t q_seq = static_cast<std::size_t>(s.q_len * s.heads_q * s.head_dim) * elem;
  int64_t max_pages = 0;
  for (const int64_t len : lens) max_pages = std::max(max_pages, (len + page_size - 1) / page_size);
  const int64_t num_pages = batch * max_pages + 3;  // spare pages no sequence owns
  std::vector<int32_t> pages(static_cast<std::size_t>(num_pages));
  std::iota(pages.begin(), pages.end(), 0);
  std::mt19937 gen(static_cast<unsigned>(seed));
  std::shuffle(pages.begin(), pages.end(), gen);
  table_.assign(static_cast<std::size_t>(batch * max_pages), -1);  // entries past a sequence: never read
  q_ = DeviceBuffer(static_cast<std::size_t>(batch) * q_seq);
  o_ = DeviceBuffer(static_cast<std::size_t>(batch) * q_seq);
  k_pool_ = DeviceBuffer(static_cast<std::size_t>(num_pages * page_size) * row);
  v_pool_ = DeviceBuffer(static_cast<std::size_t>(num_pages * page_size) * row);
  std::size_t next = 0;
  for (int64_t b = 0; b < batch; ++b) {
    lens_.push_back(static_cast<int32_t>(lens[b]));
    const AttentionDims one_dims{1, s.heads_q, s.heads_kv, s.head_dim, s.q_len, lens[b], s.causal};
    seqs_.push_back(std::make_unique<AttentionData>(one_dims, dtype, seed * 131 + b, stream));
    const attention::Problem one = seqs_.back()->problem();
    SB_CUDA_CHECK(cudaMemcpyAsync(q_.as<char>() + b * q_seq, one.q, q_seq, cudaMemcpyDeviceToDevice, stream));
    if (fp8) {  // the sequence's own inputs, rounded in place to the values the cache holds: its reference sees them
      const std::size_t n = static_cast<std::size_t>(lens[b]) * row_elems;
      round_through_e4m3(const_cast<void*>(one.k), n, dtype, kFp8KScale, stream);
      round_through_e4m3(const_cast<void*>(one.v), n, dtype, kFp8VScale, stream);
    }
    DeviceBuffer k8, v8;
    const void* k_src = cached_kv(one, false, kv_cache, k8, stream);
    const void* v_src = cached_kv(one, true, kv_cache, v8, stream);
    for (int64_t j = 0; j * page_size < lens[b]; ++j) {
      const int32_t page = pages[next++];
      table_[static_cast<std::size_t>(b * max_pages + j)] = page;
      const std::size_t rows = static_cast<std::size_t>(std::min(page_size, lens[b] - j * page_size));
      const std::size_t dst = static_cast<std::size_t>(page * page_size) * row;
      const std::size_t src = static_cast<std::size_t>(j * page_size) * row;
      SB_CUDA_CHECK(cudaMemcpyAsync(k_pool_.as<char>() + dst, static_cast<const char*>(k_src) + src, rows * row,
                                    cudaMemcpyDeviceToDevice, stream));
      SB_CUDA_CHECK(cudaMemcpyAsync(v_pool_.as<char>() + dst, static_cast<const char*>(v_src) + src, rows * row,
                                    cudaMemcpyDeviceToDevice, stream));
    }
    SB_CUDA_CHECK(cudaStreamSynchronize(stream));  // k8 and v8 are read before they go
  }
  d_lens_ = DeviceBuffer(lens_.size() * sizeof(int32_t));
  d_table_ = DeviceBuffer(table_.size() * sizeof(int32_t));
  SB_CUDA_CHECK(cudaMemcpyAsync(d_lens_.get(), lens_.data(), d_lens_.bytes(), cudaMemcpyHostToDevice, stream));
  SB_CUDA_CHECK(cudaMemcpyAsync(d_table_.get(), table_.data(), d_table_.bytes(), cudaMemcpyHostToDevice, stream));
  poison_output();
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  paged_attention::Problem& p = problem_;
  p.batch = batch;
  p.heads_q = s.heads_q;
  p.heads_kv = s.heads_kv;
  p.head_dim = s.head_dim;
  p.q_len = s.q_len;
  p.page_size = page_size;
  p.num_pages = num_pages;
  p.max_pages = max_pages;
  p.causal = s.causal;
  p.dtype = dtype;
  p.kv_cache = kv_cache;
  if (fp8) {
    p.k_scale = kFp8KScale;
    p.v_scale = kFp8VScale;
  }
  p.seq_lens_host = lens_.data();
  p.seq_lens = d_lens_.as<int32_t>();
  p.block_table = d_table_.as<int32_t>();
  p.q = q_.get();
  p.k_pages = k_pool_.get();
  p.v_pages = v_pool_.get();
  p.o = o_.get();
}

void PagedData::reserve_workspace(std::size_t bytes) {
  if (bytes > workspace_.bytes()) workspace_ = DeviceBuffer(bytes);
  problem_.workspace = workspace_.get();
  problem_.workspace_size = workspace_.bytes();
}

void PagedData::poison_output() {
  SB_CUDA_CHECK(cudaMemsetAsync(o_.get(), 0xff, o_.bytes(), stream_));  // NaN in fp16 and bf16
}

Check PagedData::verify() { return verify_output(o_.get()); }

Check PagedData::verify_output(const void* o) {
  const std::size_t q_seq = static_cast<std::size_t>(problem_.q_len * problem_.heads_q * problem_.head_dim) *
                            size_bytes(problem_.dtype);
  Check all;
  for (std::size_t b = 0; b < seqs_.size(); ++b) {
    seqs_[b]->poison_output();
    SB_CUDA_CHECK(cudaMemcpyAsync(seqs_[b]->problem().o, static_cast<const char*>(o) + b * q_seq, q_seq,
                                  cudaMemcpyDeviceToDevice, stream_));
    SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const Check c = seqs_[b]->verify();
    all.err = std::max(all.err, c.err);
    if (!c.ok && all.ok) {
      all.ok = false;
      all.message = "sequence " + std::to_string(b) + " of " + std::to_string(lens_[b]) + " keys: " + c.message;
    }
  }
  return all;
}

Check PagedData::check_kv_read() {
  const std::size_t blocks = static_cast<std::size_t>(problem_.batch * problem_.max_pages);
  // A block that writes nothing leaves 0xffffffff in its word, which the sum below does not expect.
  SB_CUDA_CHECK(cudaMemsetAsync(problem_.workspace, 0xff, sizeof(unsigned) * blocks, stream_));
  launch_paged_kv_read(problem_, stream_);
  std::vector<unsigned> sums(blocks);
  SB_CUDA_CHECK(cudaMemcpyAsync(sums.data(), problem_.workspace, sizeof(unsigned) * blocks, cudaMemcpyDeviceToHost,
                                stream_));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  unsigned got = 0, want = 0;
  for (const unsigned x : sums) got += x;
  for (const auto& seq : seqs_)
    for (const bool v : {false, true}) {
      const attention::Problem one = seq->problem();
      DeviceBuffer scratch;
      const void* bytes = cached_kv(one, v, problem_.kv_cache, scratch, stream_);
      want += word_sum(bytes, one.kv_bytes() / 2 / size_bytes(one.dtype) * problem_.kv_element_bytes(), stream_);
    }
  Check c;
  c.ok = got == want;
  c.err = c.ok ? 0.0 : 2.0;  // exact or not: no tolerance
  char msg[192];
  std::snprintf(msg, sizeof msg, "the blocks' word sums add to 0x%08x, CUB's sum over the sequences' K and V is 0x%08x%s",
                got, want, c.ok ? "" : ": some owned bytes were not read exactly once");
  c.message = msg;
  return c;
}

}  // namespace sb::bench
