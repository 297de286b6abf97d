// Runtime DType -> compile-time element type, in one place (flash-attention's FP16_SWITCH without the
// macro). f is called with a value of the element type: dispatch(t, [&](auto tag) { using T = decltype(tag); ... }).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>
#include <string>

#include "common/dtype.h"

namespace sb {

template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::f32; };
template <> struct DTypeOf<__half> { static constexpr DType value = DType::f16; };
template <> struct DTypeOf<__nv_bfloat16> { static constexpr DType value = DType::bf16; };

template <typename F>
decltype(auto) dispatch(DType t, F&& f) {
  switch (t) {
    case DType::f32: return f(float{});
    case DType::f16: return f(__half{});
    case DType::bf16: return f(__nv_bfloat16{});
  }
  throw std::invalid_argument("dtype: unsupported value " + std::to_string(static_cast<int>(t)));
}

}  // namespace sb
