// NVTX v3 ranges in the `solbench` domain. ncu's --nvtx-include reads '@' and a trailing '/' as syntax,
// so a case name "rmsnorm/vectorized/bf16/t1_h4096/cold" becomes the range "rmsnorm:vectorized:bf16:t1_h4096:cold".
#pragma once

#include <nvtx3/nvtx3.hpp>

#include <algorithm>
#include <string>

namespace sb::bench {

struct NvtxDomain {
  static constexpr const char* name{"solbench"};
};

inline std::string nvtx_name(std::string case_name) {
  std::replace(case_name.begin(), case_name.end(), '/', ':');
  std::replace(case_name.begin(), case_name.end(), '@', '_');
  return case_name;
}

using NvtxRange = nvtx3::scoped_range_in<NvtxDomain>;

}  // namespace sb::bench
