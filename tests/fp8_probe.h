// FP8 e4m3 widened on the device (fp8_probe.cu), for test_paged_attention_gpu.cpp.
#pragma once

#include <cstdint>
#include <vector>

namespace sb::test {

// The bits of each e4m3 byte (bytes.size() a multiple of 16) widened to bf16 (else fp16) by common/fp8.cuh's
// e4m3x16_to on the GPU, in order.
std::vector<uint16_t> widen_e4m3_on_device(const std::vector<uint8_t>& bytes, bool bf16);

}  // namespace sb::test
