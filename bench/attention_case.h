// One attention problem on the device: Q, K, V, O, the workspace, a cuBLAS handle, and the check
// against the fp64 reference with FlashAttention's tolerance rule. Shared by bench_attention and the
// GPU tests, so both build inputs and verify the same way.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "attention_shapes.h"
#include "harness/device.h"
#include "verify.h"

namespace sb::bench {

struct AttentionDims {
  int64_t batch, heads_q, heads_kv, head_dim, q_len, kv_len;
  bool causal;
};

// b<batch>_hq<heads_q>_hkv<heads_kv>_d<head_dim>_q<q_len>_kv<kv_len>[_causal], as in case names.
inline std::string shape_name(const AttentionDims& d) {
  return "b" + std::to_string(d.batch) + "_hq" + std::to_string(d.heads_q) + "_hkv" + std::to_string(d.heads_kv) + "_d" +
         std::to_string(d.head_dim) + "_q" + std::to_string(d.q_len) + "_kv" + std::to_string(d.kv_len) +
         (d.causal ? "_causal" : "");
}

// The dimensions of a --shapes attention shape.
inline AttentionDims dims_of(const AttentionShape& s) {
  return {s.batch, s.heads_q, s.heads_kv, s.head_dim, s.q_len, s.kv_len, s.causal};
}

// A problem of these dimensions and dtype with no tensors (null pointers, the default scale): enough for
// what reads the shape only, such as a plan or a launch floor.
inline attention::Problem problem_of(const AttentionDims& d, DType dtype) {
  attention::Problem p;
  p.batch = d.batch;
  p.heads_q = d.heads_q;
  p.heads_kv = d.heads_kv;
  p.head_dim = d.head_dim;
  p.q_len = d.q_len;
  p.kv_len = d.kv_len;
  p.causal = d.causal;
  p.dtype = dtype;
  return p;
}

// Reference rows for the tolerance rule (FlashAttention's, research/kernels.md section C):
//   max |ours - ref| <= 2 * max |same - ref| + 1e-5 over the checked rows, where ref is fp64 attention
// on the dtype-rounded inputs and `same` emulates PyTorch's manual composite in the problem's dtype
// (Q K^T rounded to the dtype, times the scale in fp32 and rounded, softmax in fp32 rounded, P V accumulated in fp32
// and rounded). The bound scales itself with dtype, head_dim and length; fp32 gets ~1e-5.
struct AttentionRefRow {
  int64_t b, h, i;
  std::vector<double> ref, same;  // head_dim values each
};

// `count` elements of type `t` from device memory, as doubles (synchronizes `stream`).
std::vector<double> fetch_all(const void* device, DType t, std::size_t count, cudaStream_t stream);

// ref_kv_read, the decode reference: a plain kernel that reads K and V once and writes one word a block
// (harness/fill.h's read_sum_kernel) into p.workspace. kv_read_supports says why a problem cannot take it
// ("" if it can); kv_read_workspace_bytes is what it needs. check_kv_read runs it once and checks that its
// blocks read every byte of K and V exactly once: the sum of their word sums against CUB's over K and V
// (err 0 when equal). Synchronizes.
std::string kv_read_supports(const attention::Problem& p);
std::size_t kv_read_workspace_bytes(const attention::Problem& p);
void launch_kv_read(const attention::Problem& p, cudaStream_t stream);
Check check_kv_read(const attention::Problem& p, cudaStream_t stream);

// ref_kv_stream, the decode reference in decode_splitk's order: the blocks decode_splitk launches where it
// does not split KV (one a batch and unit of Plan::heads_per_block adjacent kv heads), each reading its
// unit's piece of every key row in key order through a cp.async pipeline of 16 KB stages, and computing
// nothing but one word sum a block. Against ref_kv_read (one grid-stride sweep over K then V), it separates
// what decode_splitk's order of reading costs from what its computing costs. kv_stream_supports refuses,
// with the reason, a problem decode_splitk does not take, splits, or reads more than once (row blocks); the
// workspace, launch and check are ref_kv_read's, with one word a block.
std::string kv_stream_supports(const attention::Problem& p);
std::size_t kv_stream_workspace_bytes(const attention::Problem& p);
void launch_kv_stream(const attention::Problem& p, cudaStream_t stream);
Check check_kv_stream(const attention::Problem& p, cudaStream_t stream);

class AttentionData {
 public:
  // Q, K, V ~ N(0, 1) drawn on the device from `seed`; O poisoned with NaN; no workspace yet.
  // q_stddev != 1 draws Q ~ N(0, q_stddev^2) instead (the reference sees the same Q): large values give
  // extreme logits (q.k ~ q_stddev * sqrt(head_dim)) for the overflow tests. scale is the problem's
  // softmax scale (0: 1 / sqrt(head_dim)); the reference uses the same.
  AttentionData(const AttentionDims& dims, DType dtype, uint64_t seed, cudaStream_t stream, float q_stddev = 1.0f,
                double scale = 0.0);
  ~AttentionData();
  AttentionData(const AttentionData&) = delete;
  AttentionData& operator=(const AttentionData&) = delete;

  attention::Problem problem() const;
  // Allocates the workspace (outside any timing): the largest any implementation under test needs.
  void reserve_workspace(std::size_t bytes);
  void poison_output();
  // All rows up to kFullCheckRows (batch * heads_q * q_len), else kSampledRows spread over batch,
  // heads and positions (the first and last included), plus a device scan that no O element is NaN
  // or Inf. Synchronizes.
  Check verify();

  static constexpr int64_t kFullCheckRows = 512;
  static constexpr int64_t kSampledRows = 32;
  static constexpr std::size_t kReferenceThreads = 16;  // host threads computing the reference rows

  // verify()'s fp64 reference, with what identifies the inputs it was computed from: the softmax scale,
  // and the sizes and word sums of Q, K and V (rows empty before the first verify()).
  struct Reference {
    std::array<double, 7> inputs = {};
    std::vector<AttentionRefRow> rows;
  };
  // Moves the reference out (this data's next verify() computes it again).
  Reference take_reference();
  // A reference taken from an earlier AttentionData: kept if its inputs' word sums equal this data's, so
  // that a bench which rebuilds a shape's data (the interleaved repetitions do, shape after shape) computes
  // its fp64 reference once, not once per implementation; otherwise dropped, and verify()
  // computes it. Returns whether it was kept. Both synchronize.
  bool adopt_reference(Reference r);

 private:
  void compute_reference();
  std::array<double, 7> inputs() const;

  AttentionDims d_;
  DType dtype_;
  double scale_;
  cudaStream_t stream_;
  DeviceBuffer q_, k_, v_, o_, ws_;  // K and V in allocations of their own
  cublasHandle_t cublas_ = nullptr;
  std::vector<AttentionRefRow> rows_;  // the checked rows with their references, computed once
};

}  // namespace sb::bench
