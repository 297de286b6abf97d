// Fast math shared by the kernels' online softmaxes.
#pragma once

namespace sb {

// 2^x as one MUFU.EX2 (ex2.approx.ftz.f32): ex2_approx(-inf) = +0, and results below 2^-126 flush to 0
// where exp2f would scale around MUFU.EX2 to return a subnormal. For softmax weights, whose largest is
// 1, a weight under 2^-126 of the row's maximum is 0 either way within fp32 sums.
__device__ inline float ex2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace sb
