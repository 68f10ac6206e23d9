// The energy-window CSV log, byte-compatible with the original Zeus:
//   start_time,window_name,elapsed_time,gpu0_energy,gpu2_energy
// one row per ended (not cancelled) window, flushed as it is written.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "zeus/monitor/measurement.hpp"
#include "zeus/platform/error.hpp"

namespace zeus {

class WindowLog {
  public:
    // Creates missing parent directories and appends to the file: a new or
    // empty file gets the header, a log of the same GPUs (the same header)
    // keeps its rows, and any other file is refused, never replaced. Errors
    // name the path, why it cannot be written and the fix.
    static Result<std::unique_ptr<WindowLog>> open(const std::string& path, const std::vector<unsigned>& gpu_indices);
    ~WindowLog();
    WindowLog(const WindowLog&) = delete;
    WindowLog& operator=(const WindowLog&) = delete;

    Status append(const std::string& window, const Measurement& m);

  private:
    WindowLog(std::FILE* file, std::string path, std::vector<unsigned> gpus)
        : file_(file), path_(std::move(path)), gpus_(std::move(gpus)) {}
    std::FILE* file_;
    std::string path_;
    std::vector<unsigned> gpus_;
    std::mutex mutex_;
};

}  // namespace zeus
