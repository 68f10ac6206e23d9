#include "monitor/window_log.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "zeus/platform/python_float.hpp"

namespace zeus {

Result<std::unique_ptr<WindowLog>> WindowLog::open(const std::string& path, const std::vector<unsigned>& gpu_indices) {
    namespace fs = std::filesystem;
    const fs::path parent = fs::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec) {
        return Error{ErrorCode::InvalidConfig,
                     fmt::format("cannot create the directory of log file {}: {}", path, ec.message()),
                     "choose a log file path in a directory you can write to", 0};
    }
    std::FILE* file = std::fopen(path.c_str(), "w");
    if (file == nullptr) {
        return Error{ErrorCode::InvalidConfig, fmt::format("cannot write log file {}: {}", path, std::strerror(errno)),
                     "choose a log file path you can write to", 0};
    }
    std::string header = "start_time,window_name,elapsed_time";
    for (unsigned gpu : gpu_indices) header += fmt::format(",gpu{}_energy", gpu);
    header += "\n";
    if (std::fputs(header.c_str(), file) < 0 || std::fflush(file) != 0) {
        std::fclose(file);
        return Error{ErrorCode::OperatingSystem, fmt::format("cannot write log file {}: {}", path, std::strerror(errno)),
                     "check free space and permissions", 0};
    }
    return std::unique_ptr<WindowLog>(new WindowLog(file, path, gpu_indices));
}

WindowLog::~WindowLog() {
    if (file_ != nullptr) std::fclose(file_);
}

Status WindowLog::append(const std::string& window, const Measurement& m) {
    const double start = std::chrono::duration<double>(m.start_time.time_since_epoch()).count();
    std::string row = fmt::format("{},{},{}", python_float_repr(start), window, python_float_repr(m.time.count()));
    for (unsigned gpu : gpus_) {
        const auto it = m.gpu_energy.find(gpu);
        // A lost GPU's energy is unknown: 'nan' (what the original's float() reads), never 0.0.
        const bool known = it != m.gpu_energy.end() && !it->second.lost;
        row += "," + python_float_repr(known ? it->second.energy.count() : std::numeric_limits<double>::quiet_NaN());
    }
    row += "\n";
    std::lock_guard lock(mutex_);
    if (std::fputs(row.c_str(), file_) < 0 || std::fflush(file_) != 0) {
        return Error{ErrorCode::OperatingSystem, fmt::format("cannot append to log file {}: {}", path_, std::strerror(errno)),
                     "check free space and permissions", 0};
    }
    return {};
}

}  // namespace zeus
