// A demo load for real NVIDIA GPUs without compiling any GPU code: the CUDA
// driver API (libcuda.so.1, loaded at run time) fills a large buffer with
// cuMemsetD32 over and over, which keeps the memory system and the copy
// engines busy. Used only by `zeus demo` on real hardware.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus::cli {

// Runs the load on each CUDA ordinal in `devices` for `duration`, one thread
// per device. Blocks until done.
Status run_cuda_memset_load(const std::vector<unsigned>& devices, std::chrono::duration<double> duration);

}  // namespace zeus::cli
