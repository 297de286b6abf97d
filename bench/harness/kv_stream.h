// ref_kv_stream's kernel: K and V read in decode_splitk's block order, nothing computed (bench_attention's
// decode reference beside ref_kv_read's read_sum_kernel, harness/fill.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace sb::bench {

inline constexpr int kKvStreamThreads = 256;  // a block's threads; a unit's piece of a key row divides them

// Reads K and V, BSHD [batch, kv_len, row_vecs 16-byte vectors], as batch x units blocks: block
// b * units + unit reads, for every key of batch entry b in key order, the unit's piece_vecs vectors of the
// key row (at unit * piece_vecs), through a cp.async pipeline of `stages` stages of 16 KB (3 or 6: the
// bytes in flight of decode_splitk's FMA and tensor-core blocks), and writes one word a block:
// block_sums[i] = the wrapping sum of the 32-bit words block i read. K and V 16-byte aligned; piece_vecs
// divides kKvStreamThreads; stages other than 3 or 6 throw std::invalid_argument.
void kv_stream_kernel(const void* k, const void* v, int64_t batch, int kv_len, int64_t row_vecs, int units,
                      int piece_vecs, int stages, unsigned* block_sums, cudaStream_t stream);

}  // namespace sb::bench
