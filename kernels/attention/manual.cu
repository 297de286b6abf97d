// manual: the textbook attention a profiler starts from. S = Q K^T (cuBLAS, fp32 scores), then one
// kernel applies scale, the bottom-right causal mask and a numerically stable softmax (fp32 math) and
// writes P in the input dtype, then O = P V (cuBLAS), as PyTorch's matmul + softmax + matmul does.
// Mapping: both GEMMs are one cublasGemmBatchedEx over batch x heads_q, with pointer arrays built on the
// device by a small kernel (GQA: q head h reads kv head h / group, no copies of K or V); the softmax
// kernel runs one 256-thread block per score row, the row cached in shared memory when it fits
// (kv_len <= 12032: S read once), else read twice.
// Traffic: Q, K, V, O once, plus the score matrix written (fp32), read once or twice, and P written and
// read: batch * heads_q * q_len * kv_len * (8 or 12 + 2 * sizeof(dtype)) bytes. That is the point.
// Constraint: the scores must fit the workspace budget (16 GiB); supports() says so otherwise.
#include <cublas_v2.h>

#include <cmath>
#include <limits>

#include "attention/attention.h"
#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/reduce.cuh"
#include "common/vec.cuh"

namespace sb::attention::manual {

namespace {

constexpr std::size_t kScoresBudgetBytes = std::size_t{16} << 30;
constexpr int kSoftmaxThreads = 256;
constexpr int kCachedRowMax = 12032;  // 47 KB of fp32 scores: with the reduction scratch, under 48 KB
constexpr std::size_t kAlign = 256;

std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

struct Layout {
  std::size_t pointers, scores, probs, total;  // byte offsets into the workspace, and its size
};

Layout layout(const Problem& p) {
  const std::size_t pairs = static_cast<std::size_t>(p.batch * p.heads_q) * p.q_len * p.kv_len;
  Layout l{};
  l.pointers = 0;
  l.scores = align_up(6 * sizeof(void*) * static_cast<std::size_t>(p.batch * p.heads_q));
  l.probs = l.scores + align_up(pairs * sizeof(float));
  l.total = l.probs + align_up(pairs * size_bytes(p.dtype));
  return l;
}

void cublas_check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("attention/manual: ") + what + " failed: " + cublasGetStatusString(st));
}

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::f32: return CUDA_R_32F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
  }
  throw std::invalid_argument("attention/manual: unsupported dtype");
}

// Pointer arrays for the two batched GEMMs, one entry per (batch, q head).
struct Pointers {
  const void** qk_a;  // K of the kv head
  const void** qk_b;  // Q
  void** qk_c;        // S
  const void** pv_a;  // V of the kv head
  const void** pv_b;  // P
  void** pv_c;        // O
};

__global__ void pointer_kernel(Pointers ptr, const char* q, const char* k, const char* v, char* o, char* s, char* pr,
                               int64_t heads_q, int64_t heads_kv, int64_t head_dim, int64_t q_len, int64_t kv_len,
                               int64_t elem_bytes, int64_t count) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const int64_t b = i / heads_q, h = i % heads_q, kvh = h / (heads_q / heads_kv);
  const int64_t q_off = ((b * q_len) * heads_q + h) * head_dim * elem_bytes;
  const int64_t kv_off = ((b * kv_len) * heads_kv + kvh) * head_dim * elem_bytes;
  const int64_t rows = q_len * kv_len;
  ptr.qk_a[i] = k + kv_off;
  ptr.qk_b[i] = q + q_off;
  ptr.qk_c[i] = s + i * rows * static_cast<int64_t>(sizeof(float));
  ptr.pv_a[i] = v + kv_off;
  ptr.pv_b[i] = pr + i * rows * elem_bytes;
  ptr.pv_c[i] = o + q_off;
}

// One block per score row (batch * heads_q * q_len rows of kv_len): p = softmax(scale * s) over the
// keys the row may see, 0 for the masked ones; a row that sees no key is all 0.
template <typename T, bool CacheRow>
__global__ void __launch_bounds__(kSoftmaxThreads)
    softmax_kernel(const float* scores, T* probs, int64_t q_len, int64_t kv_len, bool causal, float scale) {
  extern __shared__ float row_cache[];
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  const int64_t i = row % q_len;
  const float* s = scores + row * kv_len;
  T* p = probs + row * kv_len;
  // Bottom-right causal: query i sees keys j <= i + (kv_len - q_len).
  const int64_t visible = causal ? std::min<int64_t>(kv_len, std::max<int64_t>(0, i + kv_len - q_len + 1)) : kv_len;

  float m = -std::numeric_limits<float>::infinity();
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
    const float x = s[j] * scale;
    if (CacheRow) row_cache[j] = x;
    m = fmaxf(m, x);
  }
  m = block_max(m, scratch);
  float l = 0.0f;
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) l += expf((CacheRow ? row_cache[j] : s[j] * scale) - m);
  l = block_sum(l, scratch);
  const float inv = visible > 0 ? 1.0f / l : 0.0f;
  for (int64_t j = threadIdx.x; j < kv_len; j += blockDim.x)
    p[j] = from_float<T>(j < visible ? expf((CacheRow ? row_cache[j] : s[j] * scale) - m) * inv : 0.0f);
}

}  // namespace

std::string supports(const Problem& p) {
  if (!p.cublas) return "needs a cuBLAS handle (problem.cublas)";
  const Layout l = layout(p);
  if (l.total - l.scores > kScoresBudgetBytes)
    return "the score and probability matrices need " + std::to_string((l.total - l.scores) >> 20) +
           " MiB, over the " + std::to_string(kScoresBudgetBytes >> 20) + " MiB budget";
  if (p.batch * p.heads_q > std::numeric_limits<int>::max()) return "batch * heads_q > 2^31 - 1 (cuBLAS batch count)";
  if (p.kv_len > std::numeric_limits<int>::max() || p.q_len * p.batch * p.heads_q > std::numeric_limits<int>::max())
    return "more than 2^31 - 1 score rows or keys";
  return "";
}

std::size_t workspace_bytes(const Problem& p) { return layout(p).total; }

void launch(const Problem& p, cudaStream_t stream) {
  const Layout l = layout(p);
  char* ws = static_cast<char*>(p.workspace);
  const int64_t count = p.batch * p.heads_q;
  Pointers ptr{};
  auto** base = reinterpret_cast<void**>(ws + l.pointers);
  ptr.qk_a = const_cast<const void**>(base + 0 * count);
  ptr.qk_b = const_cast<const void**>(base + 1 * count);
  ptr.qk_c = base + 2 * count;
  ptr.pv_a = const_cast<const void**>(base + 3 * count);
  ptr.pv_b = const_cast<const void**>(base + 4 * count);
  ptr.pv_c = base + 5 * count;
  const int64_t elem = static_cast<int64_t>(size_bytes(p.dtype));
  pointer_kernel<<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(
      ptr, static_cast<const char*>(p.q), static_cast<const char*>(p.k), static_cast<const char*>(p.v),
      static_cast<char*>(p.o), ws + l.scores, ws + l.probs, p.heads_q, p.heads_kv, p.head_dim, p.q_len, p.kv_len, elem,
      count);
  SB_LAUNCH_CHECK();

  cublas_check(cublasSetStream(p.cublas, stream), "cublasSetStream");
  const cudaDataType_t t = cuda_type(p.dtype);
  const float one = 1.0f, zero = 0.0f;
  const int d = static_cast<int>(p.head_dim), sq = static_cast<int>(p.q_len), sk = static_cast<int>(p.kv_len);
  const int ld_q = static_cast<int>(p.heads_q * p.head_dim), ld_kv = static_cast<int>(p.heads_kv * p.head_dim);
  // S^T (kv_len x q_len, column-major) = K (col-major view D x kv_len, transposed) x Q (D x q_len).
  cublas_check(cublasGemmBatchedEx(p.cublas, CUBLAS_OP_T, CUBLAS_OP_N, sk, sq, d, &one, ptr.qk_a, t, ld_kv, ptr.qk_b, t,
                                   ld_q, &zero, ptr.qk_c, CUDA_R_32F, sk, static_cast<int>(count), CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT),
               "cublasGemmBatchedEx (Q K^T)");

  const bool cache = p.kv_len <= kCachedRowMax;
  const auto rows = static_cast<unsigned>(count * p.q_len);
  const float scale = static_cast<float>(p.softmax_scale());
  dispatch(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* probs = reinterpret_cast<T*>(ws + l.probs);
    const auto* scores = reinterpret_cast<const float*>(ws + l.scores);
    if (cache)
      softmax_kernel<T, true><<<rows, kSoftmaxThreads, p.kv_len * sizeof(float), stream>>>(scores, probs, p.q_len, p.kv_len,
                                                                                           p.causal, scale);
    else
      softmax_kernel<T, false><<<rows, kSoftmaxThreads, 0, stream>>>(scores, probs, p.q_len, p.kv_len, p.causal, scale);
  });
  SB_LAUNCH_CHECK();

  // O^T (D x q_len, column-major, ld heads_q * D) = V (D x kv_len) x P^T (kv_len x q_len).
  cublas_check(cublasGemmBatchedEx(p.cublas, CUBLAS_OP_N, CUBLAS_OP_N, d, sq, sk, &one, ptr.pv_a, t, ld_kv, ptr.pv_b, t,
                                   sk, &zero, ptr.pv_c, t, ld_q, static_cast<int>(count), CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT),
               "cublasGemmBatchedEx (P V)");
}

}  // namespace sb::attention::manual
