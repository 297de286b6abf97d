// decode_splitk: flash-decoding. A block reads one chunk of one kv head's K and V once (two adjacent kv
// heads at MHA), for every query row of that head's GQA group, with an fp32 online softmax; a sequence's
// chunks run in parallel (split-KV) and merge by log-sum-exp. make_plan (decode_splitk.h) picks the splits,
// the rows a block and the kernel: decode_splitk_tc.cu (GQA, 2-8 query rows of a kv head, head_dim 64/128:
// mma.sync) or decode_splitk_fma.cu (MHA, head_dim 256: FMAs). This file holds the combine kernel (launched
// programmatically dependent on the split grid; small tensor-core plans merge inside a cluster instead),
// supports() and launch(). Traffic: K and V once, Q and O once, 8 B per (row, split, dim)
// of partials (L2-resident). Constraints: fp16/bf16, head_dim 64/128/256, q_len <= 8, 16-byte aligned Q, K,
// V (supports()). Against manual: the score matrix never reaches memory, and K and V are read once per GQA
// group instead of once per q head; results/h200/FINDINGS.md has the measured effect.
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "attention/decode_splitk.cuh"
#include "common/device.h"
#include "common/pdl.cuh"
#include "common/reduce.cuh"

namespace sb::attention::decode_splitk {

namespace {

// One block per output row: O = sum_s 2^(lse_s - M) o_s / sum_s 2^(lse_s - M), M = max_s lse_s, in a
// fixed order (bit-identical runs). Splits with lse = -inf (no visible key) weigh 0; a row whose
// splits all saw no key outputs 0.
template <typename T, int D>
__global__ void __launch_bounds__(kCombineWarps * 32)
    combine_kernel(const float* __restrict__ part_o, const float* __restrict__ part_lse, T* __restrict__ o,
                   int num_splits) {
  constexpr int kPerLane = D / 32;  // 2, 4 or 8 floats
  __shared__ __align__(16) float s_o[kCombineWarps][D];
  const int64_t row = blockIdx.x;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  pdl_wait();  // the split grid has finished and its partials are visible
  const float* lse = part_lse + row * num_splits;
  float mx = kNegInf;
  for (int s = lane; s < num_splits; s += 32) mx = fmaxf(mx, lse[s]);
  mx = warp_max(mx);
  const float mu = usable_max(mx);
  float sum = 0.0f;
  for (int s = lane; s < num_splits; s += 32) sum += exp2f(lse[s] - mu);
  sum = warp_sum(sum);

  float acc[kPerLane] = {};
#pragma unroll 4
  for (int s = warp; s < num_splits; s += kCombineWarps) {
    const float w = exp2f(lse[s] - mu);
    const float* src = part_o + (row * num_splits + s) * D + lane * kPerLane;
    float x[kPerLane];
    if constexpr (kPerLane == 2) {
      const float2 v = *reinterpret_cast<const float2*>(src);
      x[0] = v.x;
      x[1] = v.y;
    } else {
#pragma unroll
      for (int i = 0; i < kPerLane; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(src + i);
        x[i] = v.x;
        x[i + 1] = v.y;
        x[i + 2] = v.z;
        x[i + 3] = v.w;
      }
    }
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) acc[i] += w > 0.0f ? w * x[i] : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) s_o[warp][lane * kPerLane + i] = acc[i];
  __syncthreads();
  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float out = 0.0f;
#pragma unroll
    for (int w = 0; w < kCombineWarps; ++w) out += s_o[w][d];
    o[row * D + d] = from_float<T>(out * inv);
  }
}

}  // namespace

std::string supports(const Problem& p) {
  if (p.dtype == DType::f32) return "fp32 is not supported (fp16 and bf16 only: 8 elements per 16-byte load)";
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
    return "head_dim " + std::to_string(p.head_dim) + " is not supported (64, 128 or 256)";
  if (p.q_len > kMaxQLen)
    return "q_len " + std::to_string(p.q_len) + " > " + std::to_string(kMaxQLen) +
           " (decode: one query token, or up to 8 speculative tokens)";
  for (auto [ptr, name] : {std::pair<const void*, const char*>{p.q, "q"}, {p.k, "k"}, {p.v, "v"}})
    if (!is_aligned(ptr, 16)) return std::string(name) + " is not 16-byte aligned (16-byte loads)";
  if (p.workspace && !is_aligned(p.workspace, 16)) return "workspace is not 16-byte aligned";
  if (p.kv_len > std::numeric_limits<int>::max() - 4096) return "kv_len >= 2^31 - 4096 (32-bit key indices)";
  const int64_t rows_total = p.batch * p.q_len * p.heads_q;
  if (rows_total * kMaxSplits > std::numeric_limits<int>::max())
    return "batch * q_len * heads_q * 256 splits > 2^31 - 1 (split grid)";
  return "";
}

std::size_t workspace_bytes(const Problem& p) {
  if (!supports(p).empty()) return 0;
  return workspace_bytes(make_plan(p, device_sm_count()), p);
}

namespace {
// The combine grid after a split grid that left partials (more than one split, no cluster merge).
void launch_combine(const Problem& p, const Plan& plan, cudaStream_t stream) {
  if (plan.num_splits <= 1 || plan.cluster_combine) return;
  const Params prm = make_params(p, plan);
  dispatch_16bit(p, [&](auto tag, auto head_dim) {
    using T = decltype(tag);
    constexpr int D = decltype(head_dim)::value;
    launch_combine_grid(combine_kernel<T, D>, p.batch * p.q_len * p.heads_q, stream,
                        static_cast<const float*>(prm.part_o), static_cast<const float*>(prm.part_lse),
                        static_cast<T*>(prm.o), prm.num_splits);
  });
}
}  // namespace

void launch(const Problem& p, cudaStream_t stream) {
  const Plan plan = make_plan(p, device_sm_count());
  if (plan.tensor_cores)
    launch_tc(p, plan, stream);
  else
    launch_fma(p, plan, stream);
  launch_combine(p, plan, stream);
}

void launch_paged(const Problem& p, const Plan& plan, const PagedKv& kv, cudaStream_t stream) {
  launch_tc_paged(p, plan, kv, stream);
  launch_combine(p, plan, stream);
}

}  // namespace sb::attention::decode_splitk

