// A kernel for the tests of programmatic dependent launch (common/pdl.cuh): one that lets the kernel
// launched after it start at once and writes its data late.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace sb::test {

// Flips the sign bit of each of the n elements of elem_bytes bytes (2 or 4, little-endian) at x, on
// `stream`. The kernel first lets a dependent kernel (one launched next with sb::launch_pdl) start, then
// spins for `spin_cycles` SM clock cycles, then writes: a dependent that reads x before its pdl_wait
// returns sees the old signs.
void negate_after_spin(void* x, int64_t n, int elem_bytes, long long spin_cycles, cudaStream_t stream);

}  // namespace sb::test
