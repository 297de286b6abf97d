// Warp and block reductions over float, shared by RMSNorm (sum of squares) and softmax (max, sum).
// All are all-reduce: every participating thread gets the result.
#pragma once

#include <cuda_runtime.h>

namespace sb {

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
  static constexpr float kIdentity = 0.0f;
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
  static constexpr float kIdentity = -__builtin_huge_valf();
};

// Butterfly over aligned groups of `width` lanes (a power of two <= 32); all 32 lanes must call it.
template <typename Op>
__device__ inline float warp_allreduce(float v, int width = 32, Op op = {}) {
  for (int offset = width / 2; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
__device__ inline float warp_sum(float v, int width = 32) { return warp_allreduce<SumOp>(v, width); }
__device__ inline float warp_max(float v, int width = 32) { return warp_allreduce<MaxOp>(v, width); }

// All-reduce over a whole block (any size up to 1024, a multiple of 32). `scratch` holds 32 floats of
// shared memory; it may be reused after the call returns (the trailing barrier protects it).
template <typename Op>
__device__ inline float block_allreduce(float v, float* scratch, Op op = {}) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_allreduce<Op>(v, 32, op);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : Op::kIdentity;
  v = warp_allreduce<Op>(v, 32, op);
  __syncthreads();
  return v;
}
__device__ inline float block_sum(float v, float* scratch) { return block_allreduce<SumOp>(v, scratch); }
__device__ inline float block_max(float v, float* scratch) { return block_allreduce<MaxOp>(v, scratch); }

// Sum over aligned groups of `group` threads (a power of two <= 1024) that own one row each: shuffles inside
// the warp for group <= 32; for group > 32 (a row over several warps) one shared-memory step across the
// group's warps. Every thread of the block must call it (the barrier); `scratch` holds 32 floats of shared
// memory and is not reusable until another barrier.
__device__ inline float group_sum(float v, int group, float* scratch) {
  v = warp_sum(v, group < 32 ? group : 32);
  if (group <= 32) return v;
  const int warp = threadIdx.x / 32, warps_per_group = group / 32;
  if (threadIdx.x % 32 == 0) scratch[warp] = v;
  __syncthreads();
  const int first = warp / warps_per_group * warps_per_group;
  float s = 0.0f;
  for (int i = 0; i < warps_per_group; ++i) s += scratch[first + i];
  return s;
}

}  // namespace sb
