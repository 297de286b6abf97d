// Programmatic dependent launch (PDL, sm_90+). A kernel launched with launch_pdl may start before the
// kernel ahead of it in the stream has finished: as soon as every block of that kernel has executed
// pdl_launch_dependents (or exited). The dependent kernel must call pdl_wait before it touches anything
// the kernel ahead of it writes or reads: pdl_wait returns once that grid has completed and its stores
// are visible. What comes before pdl_wait (launch, block dispatch, index arithmetic) overlaps the kernel
// ahead. A kernel ahead that never calls pdl_launch_dependents releases its dependent at its end, as a
// plain launch would, so the pair is safe with kernels that know nothing of PDL. A kernel that both waits
// and releases releases after its wait: released first, a chain of such kernels lets each grid's dependent
// launch while that grid still waits, so waiting grids pile up on the SMs and a long chain runs slower per
// launch than a short one (rmsnorm/vectorized.cu).
// Used by decode_splitk (the combine behind the split grid) and rmsnorm/vectorized (the decode-sized
// kernel behind whatever ran before it).
#pragma once

#include <cuda_runtime.h>

#include "common/check.h"

namespace sb {

// Lets the kernel launched after this one with launch_pdl start (once every block has called it or exited).
__device__ inline void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Waits until the grid ahead of this one in the stream has completed and its memory operations are
// visible. Returns at once when this kernel was not launched with launch_pdl.
__device__ inline void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Launches kernel<<<grid, block, smem_bytes, stream>>>(args...), programmatically dependent on the kernel
// ahead of it in the stream when `pdl` is true (a plain stream-ordered launch otherwise).
template <typename... Params, typename... Args>
void launch_pdl(bool pdl, void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem_bytes, cudaStream_t stream,
                Args... args) {
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem_bytes;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  SB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
  SB_LAUNCH_CHECK();
}

}  // namespace sb
