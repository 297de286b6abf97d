// Shared-memory mbarriers (sm_90): init, arrive (plain or with expected transaction bytes) and wait on a
// phase's parity. A barrier completes a phase when its pending count (the init count) of arrivals is reached
// and, after an arrive.expect_tx, the bytes it expects have landed; the k-th completed phase has parity k % 2.
#pragma once

namespace sb {

__device__ inline void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ inline void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Arrives on `bar` and adds `bytes` to the transaction count its phase waits for (st.async, TMA).
__device__ inline void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Spins until the phase with this parity has completed.
__device__ inline void mbar_wait_parity(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

}  // namespace sb
