#include "harness/kv_stream.h"

#include <stdexcept>
#include <string>

#include "common/check.h"
#include "common/vec.cuh"
#include "harness/word_sum.cuh"

namespace sb::bench {

namespace {

template <int Stages>
constexpr int kSmemBytes = Stages * 4 * kKvStreamThreads * 16;

// A stage is 2 keys a thread of K and of V, each thread's own 16-byte pieces, which it alone reads back
// (no block barrier), as decode_splitk's FMA kernel copies. A key past kv_len copies no bytes (cp.async's
// zero fill, from key 0's address) and adds 0.
template <int Stages>
__global__ void __launch_bounds__(kKvStreamThreads) kv_stream_impl(const uint4* k, const uint4* v, int kv_len,
                                                                   int64_t row_vecs, int units, int piece_vecs,
                                                                   unsigned* block_sums) {
  extern __shared__ uint4 stages[];  // [stage][K, V, K, V][thread]
  const int tid = threadIdx.x;
  const int unit = static_cast<int>(blockIdx.x % units);
  const int64_t b = blockIdx.x / units;
  const int keys_per_pass = kKvStreamThreads / piece_vecs, key_in = tid / piece_vecs,
            keys_per_stage = 2 * keys_per_pass;
  const int64_t base = b * kv_len * row_vecs + static_cast<int64_t>(unit) * piece_vecs + tid % piece_vecs;
  const int n = (kv_len + keys_per_stage - 1) / keys_per_stage;
  auto issue = [&](int i) {  // stage i into slot i % Stages; always commits a group (group i: stage i)
    if (i < n) {
      uint4* dst = stages + (i % Stages) * 4 * kKvStreamThreads + tid;
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const int key = i * keys_per_stage + u * keys_per_pass + key_in;
        const bool valid = key < kv_len;
        const int64_t off = base + static_cast<int64_t>(valid ? key : 0) * row_vecs;
        cp_async_16_zfill(dst + 2 * u * kKvStreamThreads, k + off, valid);
        cp_async_16_zfill(dst + (2 * u + 1) * kKvStreamThreads, v + off, valid);
      }
    }
    cp_async_commit();
  };
#pragma unroll
  for (int i = 0; i < Stages - 1; ++i) issue(i);
  unsigned acc = 0;
  for (int i = 0; i < n; ++i) {
    issue(i + Stages - 1);        // into the slot this thread read back in iteration i - 1
    cp_async_wait<Stages - 1>();  // group i has landed
    const uint4* src = stages + (i % Stages) * 4 * kKvStreamThreads + tid;
#pragma unroll
    for (int u = 0; u < 4; ++u) acc += word_sum4(src[u * kKvStreamThreads]);
  }
  cp_async_wait<0>();
  write_block_word_sum<kKvStreamThreads>(acc, block_sums + blockIdx.x);
}

template <int Stages>
void launch(const void* k, const void* v, int64_t batch, int kv_len, int64_t row_vecs, int units, int piece_vecs,
            unsigned* block_sums, cudaStream_t stream) {
  static const bool ready = [] {  // once a kernel: one device a process, the harness's
    SB_CUDA_CHECK(
        cudaFuncSetAttribute(kv_stream_impl<Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes<Stages>));
    return true;
  }();
  (void)ready;
  const auto blocks = static_cast<unsigned>(batch * units);
  kv_stream_impl<Stages><<<blocks, kKvStreamThreads, kSmemBytes<Stages>, stream>>>(
      static_cast<const uint4*>(k), static_cast<const uint4*>(v), kv_len, row_vecs, units, piece_vecs, block_sums);
  SB_LAUNCH_CHECK();
}

}  // namespace

void kv_stream_kernel(const void* k, const void* v, int64_t batch, int kv_len, int64_t row_vecs, int units,
                      int piece_vecs, int stages, unsigned* block_sums, cudaStream_t stream) {
  if (stages == 3)
    launch<3>(k, v, batch, kv_len, row_vecs, units, piece_vecs, block_sums, stream);
  else if (stages == 6)
    launch<6>(k, v, batch, kv_len, row_vecs, units, piece_vecs, block_sums, stream);
  else
    throw std::invalid_argument("kv_stream_kernel: stages must be 3 or 6, got " + std::to_string(stages));
}

}  // namespace sb::bench
