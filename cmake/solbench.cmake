# Shared build helpers: warnings, the variant list of an op, the optional libtorch.

add_library(solbench_warnings INTERFACE)
target_compile_options(solbench_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra -lineinfo -Xptxas=-warn-spills --expt-relaxed-constexpr>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CONFIG:Debug>>:-G>)
if(SOLBENCH_WERROR)
  target_compile_options(solbench_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()

# solbench_variant_sources(<op> <out-var>): the .cu file of every SB_VARIANT(name, "summary") line in
# kernels/<op>/variants.def, in file order. A line whose file is missing is a configure error, so the
# registry, the build and the benchmarks can never disagree about which variants exist.
function(solbench_variant_sources op out)
  set(def ${PROJECT_SOURCE_DIR}/kernels/${op}/variants.def)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${def})
  file(STRINGS ${def} lines REGEX "^SB_VARIANT\\(")
  set(srcs)
  foreach(line IN LISTS lines)
    string(REGEX MATCH "^SB_VARIANT\\(([a-z0-9_]+)," _ "${line}")
    set(name ${CMAKE_MATCH_1})
    set(src ${PROJECT_SOURCE_DIR}/kernels/${op}/${name}.cu)
    if(NOT EXISTS ${src})
      message(FATAL_ERROR "${def}: variant '${name}' has no file ${src}")
    endif()
    list(APPEND srcs ${src})
  endforeach()
  if(NOT srcs)
    message(FATAL_ERROR "${def}: no SB_VARIANT lines")
  endif()
  set(${out} ${srcs} PARENT_SCOPE)
endfunction()

# libtorch is only for reference outputs and PyTorch baselines. AUTO: use the libtorch of the PyTorch
# installed for python3, if there is one.
macro(solbench_find_torch)
  set(SOLBENCH_HAVE_TORCH OFF)
  if(NOT SOLBENCH_WITH_TORCH STREQUAL "OFF")
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c "import torch; print(torch.utils.cmake_prefix_path)"
      OUTPUT_VARIABLE _torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _torch_rc)
    if(_torch_rc EQUAL 0 AND _torch_prefix)
      list(APPEND CMAKE_PREFIX_PATH ${_torch_prefix})
    endif()
    # libtorch's CMake replaces CMAKE_CUDA_ARCHITECTURES with -gencode flags of TORCH_CUDA_ARCH_LIST, by default
    # the visible GPU's or, on a machine without one, a list nvcc 13 partly rejects (compute_50). Unless the
    # caller sets it, it is ours in its notation (90a -> 9.0a), so a build with libtorch targets the same GPUs.
    if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST}
       AND CMAKE_CUDA_ARCHITECTURES MATCHES "^[0-9]")
      set(TORCH_CUDA_ARCH_LIST)
      foreach(_arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
        string(REGEX REPLACE "^([0-9]+)([0-9])([af]?)(-real|-virtual)?$" "\\1.\\2\\3" _arch "${_arch}")
        list(APPEND TORCH_CUDA_ARCH_LIST ${_arch})
      endforeach()
    endif()
    if(SOLBENCH_WITH_TORCH STREQUAL "ON")
      find_package(Torch REQUIRED)
    else()
      find_package(Torch QUIET)
    endif()
    if(Torch_FOUND)
      # Everything that links libtorch shares the process's libstdc++ with it. A copy of libstdc++ linked into a
      # library that Python loads beside PyTorch (the op library, bench_torch's) has locale facets of its own,
      # and the first number it formats (an error message, Google Benchmark's console) reads the wrong facet
      # and crashes. g++ links the static archive where its libstdc++.so link is missing (a toolchain image
      # without the development symlink) or where the flags ask for it (-static-libstdc++); naming the shared
      # library itself ahead of g++'s own -lstdc++ leaves the archive nothing to resolve.
      # tests/check_shared_libstdcxx.py checks the built libraries.
      if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so.6
                        OUTPUT_VARIABLE SOLBENCH_LIBSTDCXX OUTPUT_STRIP_TRAILING_WHITESPACE)
        if(IS_ABSOLUTE "${SOLBENCH_LIBSTDCXX}" AND EXISTS "${SOLBENCH_LIBSTDCXX}")
          list(APPEND TORCH_LIBRARIES "${SOLBENCH_LIBSTDCXX}")
        else()
          message(WARNING "solbench: ${CMAKE_CXX_COMPILER} names no shared libstdc++.so.6; the libraries PyTorch "
                          "loads may carry a static copy (tests/check_shared_libstdcxx.py fails then)")
        endif()
      endif()
      set(SOLBENCH_HAVE_TORCH ON)
      message(STATUS "solbench: libtorch ${Torch_VERSION} found: PyTorch baselines enabled")
    else()
      message(STATUS "solbench: libtorch not found: PyTorch baselines disabled")
    endif()
  endif()
endmacro()
