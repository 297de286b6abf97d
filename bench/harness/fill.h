// Device-side input generation and output checks, so multi-GiB problems need no host round trip.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/dtype.h"

namespace sb::bench {

// n values of N(mean, stddev^2), rounded to dtype. Deterministic in (seed, index): the same seed gives
// the same data on any GPU and launch shape (counter-based hash + Box-Muller).
void fill_normal(void* p, std::size_t n, DType t, std::uint64_t seed, float mean, float stddev, cudaStream_t s);
// An FP8 (e4m3) cache's inputs. round_through_e4m3: each of n values x becomes e4m3(x / scale) * scale in its
// dtype (e4m3: to nearest, saturating at +-448), which a power-of-two scale keeps exact in fp16 and bf16:
// the values an FP8 cache holds, for the references to see. to_e4m3: the e4m3 bytes of x / scale into dst
// (n bytes), of values round_through_e4m3 left, exactly.
void round_through_e4m3(void* p, std::size_t n, DType t, float scale, cudaStream_t s);
void to_e4m3(const void* src, std::size_t n, DType t, float scale, void* dst, cudaStream_t s);
// NaN everywhere: an element that the kernel under test does not write fails verification.
void fill_nan(void* p, std::size_t n, DType t, cudaStream_t s);
// dst = src, `bytes` of them, by a kernel: 16-byte accesses (both pointers and bytes 16-byte aligned) or
// bytes. The reference for what any kernel pays to move a problem's bytes (ref_copy_kernel), beside
// cudaMemcpyAsync, which a CUDA graph may hand to a copy engine; also the timer self-test's workload.
void copy_kernel(void* dst, const void* src, std::size_t bytes, cudaStream_t s);
// Reads `bytes` (a multiple of 16, p 16-byte aligned) by a kernel of 16-byte loads and writes nothing:
// the loads' XOR goes to *sink only if it equals `never`, which the caller keeps impossible (the data
// is known). The self-test's probe of what a flush leaves in L2.
// evict_last: the loads carry an L2 evict-last policy (createpolicy.fractional, fraction 1), as Triton's
// eviction_policy='evict_last' (torch.compile's RMSNorm reads x so) compiles to.
void read_kernel(const void* p, std::size_t bytes, bool evict_last, unsigned never, unsigned* sink, cudaStream_t s);
// Reads a_bytes at a, then b_bytes at b (each a multiple of 16, 16-byte aligned), once, by a plain kernel
// of 8 independent 16-byte loads a thread an iteration over both ranges as one grid-stride index space,
// and writes nothing but one 32-bit word a block: block_sums[i] = the wrapping sum of the 32-bit words
// block i read. The decode reference ref_kv_read (a kernel that only reads K and V: the bytes floor of
// decode under the suite's protocol). block_sums holds read_sum_blocks(a_bytes + b_bytes) words.
void read_sum_kernel(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes, unsigned* block_sums,
                     cudaStream_t s);
unsigned read_sum_blocks(std::size_t bytes);
// ref_kv_read over a paged KV cache (paged_attention.h's pools and block table): the rows of K and V that each
// sequence owns, read once in page order, nothing computed. Block b * max_pages + j reads rows
// [j * page_size, min((j + 1) * page_size, seq_lens[b])) of page block_table[b][j], in K then in V (row_bytes
// each, a multiple of 16; the pools 16-byte aligned), and writes their wrapping word sum to block_sums[b *
// max_pages + j]; a slot past its sequence writes 0. The bytes floor of paged decode, with its scattered pages.
void paged_read_sum_kernel(const void* k_pages, const void* v_pages, const int32_t* block_table,
                           const int32_t* seq_lens, int64_t batch, int64_t max_pages, int64_t page_size,
                           std::size_t row_bytes, unsigned* block_sums, cudaStream_t s);
// The wrapping sum of the 32-bit words of `bytes` at p (a multiple of 4, 4-byte aligned), by CUB's
// device reduction: the independent reference read_sum_kernel is checked against. Synchronizes.
unsigned word_sum(const void* p, std::size_t bytes, cudaStream_t s);
// Number of NaN/Inf elements; synchronizes the stream.
std::size_t count_nonfinite(const void* p, std::size_t n, DType t, cudaStream_t s);

}  // namespace sb::bench
