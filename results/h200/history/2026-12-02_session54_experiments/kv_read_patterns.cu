// Session 54's probe: does the order in which decode blocks stream K and V cost bandwidth?
// Standalone (nvcc -O3 -arch=sm_90a kv_read_patterns.cu), not part of the suite: it reads a decode
// problem's K and V ([batch][kv_len][heads][128] bf16, BSHD as the suite lays them out) in several ways,
// writes nothing (the XOR of the loads goes to *sink only if it equals a value it never takes), and times
// each launch cold with CUDA events after a 256 MiB memset that leaves L2 full of dirty lines, as the
// suite's default flush does. The modes of one shape run interleaved, in a shuffled order, each round.
//   linear : ref_kv_read's pattern: one grid-stride index space over K then V, 8 x 16 B loads a thread an
//            iteration, 8 blocks an SM of 256 threads.
//   stream : one block a (batch, unit of hpb adjacent kv heads), reading its unit's piece of every key row
//            from key 0 up through a 4-stage cp.async pipeline of 16 KB stages (64 KB in flight a block),
//            as decode_splitk's unsplit blocks do (blockIdx = batch * units + unit).
//   stream_rotb : the same, each batch starting at another key (batch b at b/batch of the way round), the
//            blocks of one batch still together on the same rows.
//   stream_rotk : the same, every block starting at another key (block i at i/blocks of the way round).
//   stream_s3, stream_s6, stream_s8 : stream with 3, 6 or 8 stages (48, 96 or 128 KB a block) instead of 4;
//            stream_s3 is decode_splitk's FMA kernel's residency at MHA (4 blocks an SM of 3 stages).
// The question: is a rotation's spread of concurrent addresses over DRAM worth more than the blocks of a
// batch sharing rows; and does a per-stream read reach the linear one's rate at decode's shapes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));          \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

__device__ __forceinline__ unsigned fold(uint4 r) { return r.x ^ r.y ^ r.z ^ r.w; }

__global__ void fill(uint4* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    p[i] = make_uint4(h, h * 3u + 1u, h * 5u + 7u, h ^ 0x9e3779b9u);
  }
}

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) linear_read(const uint4* k, const uint4* v, size_t n, unsigned never,
                                                        unsigned* sink, unsigned* check) {
  constexpr int U = 8;
  const size_t total = 2 * n, stride = size_t{gridDim.x} * blockDim.x;
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  unsigned acc = 0;
  for (; i + (U - 1) * stride < total; i += U * stride) {
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t j = i + u * stride;
      r[u] = j < n ? k[j] : v[j - n];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= fold(r[u]);
  }
  for (; i < total; i += stride) acc ^= fold(i < n ? k[i] : v[i - n]);
  if (check != nullptr) atomicXor(check, acc);
  else if (acc == never) *sink = acc;
}

// P = vectors (16 B) of a unit's piece of one key row; row_vecs = a whole key row's (heads x 16).
// A cp.async pipeline as decode_splitk's FMA kernel runs one: a stage is 16 KB (each thread copies two
// keys' 16-byte pieces of K and of V into its own shared-memory slots, then reads back exactly those, so
// no block barrier), NS stages in flight. rot: 0 none, 1 by batch, 2 by block (at stage granularity).
template <int P, int NS>
__global__ void __launch_bounds__(kThreads) stream_read(const uint4* k, const uint4* v, int kv_len, int row_vecs,
                                                        int units, int batch, int rot, unsigned never,
                                                        unsigned* sink, unsigned* check) {
  constexpr int kKeysPerPass = kThreads / P;      // keys one 16-byte copy by every thread covers
  constexpr int kKeysPerStage = 2 * kKeysPerPass;  // 4 copies a thread a stage: 2 keys x (K, V)
  extern __shared__ uint4 smem[];                  // [NS][4][kThreads]
  const int unit = blockIdx.x % units;
  const int b = blockIdx.x / units;
  const int piece = threadIdx.x % P, key_in = threadIdx.x / P;
  const size_t base = static_cast<size_t>(b) * kv_len * row_vecs + static_cast<size_t>(unit) * P + piece;
  const int stages = kv_len / kKeysPerStage;
  int start = 0;
  if (rot == 1) start = static_cast<int>(static_cast<long long>(b) * stages / batch);
  if (rot == 2) start = static_cast<int>(static_cast<long long>(blockIdx.x) * stages / gridDim.x);
  auto issue = [&](int it) {
    if (it < stages) {
      int t = start + it;
      if (t >= stages) t -= stages;
      uint4* dst = smem + (it % NS) * 4 * kThreads + threadIdx.x;
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const size_t off = base + static_cast<size_t>(t * kKeysPerStage + key_in + u * kKeysPerPass) * row_vecs;
        const unsigned d0 = static_cast<unsigned>(__cvta_generic_to_shared(dst + (2 * u) * kThreads));
        const unsigned d1 = static_cast<unsigned>(__cvta_generic_to_shared(dst + (2 * u + 1) * kThreads));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d0), "l"(k + off));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d1), "l"(v + off));
      }
    }
    asm volatile("cp.async.commit_group;\n" ::);
  };
#pragma unroll
  for (int it = 0; it < NS - 1; ++it) issue(it);
  unsigned acc = 0;
  for (int it = 0; it < stages; ++it) {
    issue(it + NS - 1);
    asm volatile("cp.async.wait_group %0;\n" ::"n"(NS - 1));
    const uint4* src = smem + (it % NS) * 4 * kThreads + threadIdx.x;
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= fold(src[u * kThreads]);
  }
  if (check != nullptr) atomicXor(check, acc);
  else if (acc == never) *sink = acc;
}

template <int P, int NS>
void launch_stream(int blocks, const uint4* k, const uint4* v, int kv_len, int row_vecs, int units, int batch, int rot,
                   unsigned never, unsigned* sink, unsigned* check) {
  constexpr int kSmem = NS * 4 * kThreads * 16;
  static bool ready = false;
  if (!ready) {
    CK(cudaFuncSetAttribute(stream_read<P, NS>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    ready = true;
  }
  stream_read<P, NS><<<blocks, kThreads, kSmem>>>(k, v, kv_len, row_vecs, units, batch, rot, never, sink, check);
}

struct Shape {
  const char* name;
  int batch, kv_len, heads, hpb;  // head_dim 128, bf16
};

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 30;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 2;
  const Shape shapes[] = {
      {"GQA b16 KV 32768", 16, 32768, 8, 1},  {"MHA b256 KV 1024", 256, 1024, 32, 2},
      {"MHA b64 KV 4096", 64, 4096, 32, 2},   {"GQA b64 KV 16384", 64, 16384, 8, 1},
      {"GQA b256 KV 4096", 256, 4096, 8, 1},  {"MHA b16 KV 8192", 16, 8192, 32, 2},
  };
  size_t max_vecs = 0;
  for (const Shape& s : shapes) max_vecs = std::max(max_vecs, size_t{1} * s.batch * s.kv_len * s.heads * 16);
  uint4 *k, *v;
  unsigned *sink, *check;
  void* flush;
  const size_t flush_bytes = size_t{256} << 20;
  CK(cudaMalloc(&k, max_vecs * 16));
  CK(cudaMalloc(&v, max_vecs * 16));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMalloc(&check, 4));
  CK(cudaMalloc(&flush, flush_bytes));
  fill<<<1024, 256>>>(k, max_vecs, 1u);
  fill<<<1024, 256>>>(v, max_vecs, 2u);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const unsigned never = 0x5eed1234u;
  std::mt19937 rng(54);
  std::printf("round,shape,mode,GB_s_median,us_median,us_min,us_max,ratio_to_linear\n");
  for (int round = 0; round < rounds; ++round) {
    for (const Shape& s : shapes) {
      const size_t n = size_t{1} * s.batch * s.kv_len * s.heads * 16;  // vectors of K (and of V)
      const int row_vecs = s.heads * 16, units = s.heads / s.hpb, blocks = s.batch * units;
      // Every stream mode must read every key: kv_len a multiple of the deepest mode's keys an iteration.
      const int deepest_keys = kThreads / (16 * s.hpb) * 2;
      if (s.kv_len % deepest_keys != 0) {
        std::fprintf(stderr, "%s: kv_len %d is not a multiple of %d\n", s.name, s.kv_len, deepest_keys);
        return 1;
      }
      const std::vector<std::string> modes = {"linear", "stream", "stream_rotb", "stream_rotk", "stream_s3", "stream_s6", "stream_s8"};
      auto launch = [&](const std::string& m, unsigned* check) {
        if (m == "linear") {
          linear_read<<<8 * sms, kThreads>>>(k, v, n, never, sink, check);
        } else {
          const int rot = m == "stream_rotb" ? 1 : m == "stream_rotk" ? 2 : 0;
          if (s.hpb == 1) {
            if (m == "stream_s8") launch_stream<16, 8>(blocks, k, v, s.kv_len, row_vecs, units, s.batch, 0, never, sink, check);
            else if (m == "stream_s3") launch_stream<16, 3>(blocks, k, v, s.kv_len, row_vecs, units, s.batch, 0, never, sink, check);
            else if (m == "stream_s6") launch_stream<16, 6>(blocks, k, v, s.kv_len, row_vecs, units, s.batch, 0, never, sink, check);
            else launch_stream<16, 4>(blocks, k, v, s.kv_len, row_vecs, units, s.batch, rot, never, sink, check);
          } else {
            if (m == "stream_s8") launch_stream<32, 8>(blocks, k, v, s.kv_len, row_vecs, units, s.batch, 0, never, sink, check);
            else if (m == "stream_s3") launch_stream<32, 3>(blocks, k, v, s.kv_len, row_vecs, units, s.batch, 0, never, sink, check);
            else if (m == "stream_s6") launch_stream<32, 6>(blocks, k, v, s.kv_len, row_vecs, units, s.batch, 0, never, sink, check);
            else launch_stream<32, 4>(blocks, k, v, s.kv_len, row_vecs, units, s.batch, rot, never, sink, check);
          }
        }
        CK(cudaGetLastError());
      };
      std::vector<std::vector<float>> t(modes.size());
      std::vector<int> order;
      for (int r = 0; r < reps; ++r)
        for (int m = 0; m < static_cast<int>(modes.size()); ++m) order.push_back(m);
      // Each mode must read every byte of K and V once: the XOR of all its threads' folds is the same.
      std::vector<unsigned> xors(modes.size());
      for (int m = 0; m < static_cast<int>(modes.size()); ++m) {
        CK(cudaMemset(check, 0, 4));
        launch(modes[m], check);
        CK(cudaMemcpy(&xors[m], check, 4, cudaMemcpyDeviceToHost));
        if (xors[m] != xors[0]) {
          std::fprintf(stderr, "%s: mode %s read XOR %08x, linear %08x\n", s.name, modes[m].c_str(), xors[m], xors[0]);
          return 1;
        }
      }
      for (int m = 0; m < static_cast<int>(modes.size()); ++m) launch(modes[m], nullptr);  // warm-up
      CK(cudaDeviceSynchronize());
      std::shuffle(order.begin(), order.end(), rng);
      for (const int m : order) {
        CK(cudaMemsetAsync(flush, m + 1, flush_bytes));
        CK(cudaEventRecord(e0));
        launch(modes[m], nullptr);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t[m].push_back(ms * 1000.0f);
      }
      double lin = 0;
      for (size_t m = 0; m < modes.size(); ++m) {
        std::vector<float> x = t[m];
        std::sort(x.begin(), x.end());
        const double med = x[x.size() / 2];
        if (m == 0) lin = med;
        std::printf("%d,%s,%s,%.1f,%.2f,%.2f,%.2f,%.4f\n", round, s.name, modes[m].c_str(), 2.0 * n * 16 / med / 1e3,
                    med, x.front(), x.back(), lin / med);
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
