#include "monitor/window_log.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "zeus/platform/python_float.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus {

namespace {

// What a log file already holds: nothing (missing or empty), or its first
// line and whether its last byte ends a line.
struct ExistingLog {
    bool empty = true;
    std::string first_line;
    bool ends_a_line = true;
};

ExistingLog read_existing(const std::string& path) {
    ExistingLog existing;
    std::ifstream in(path, std::ios::binary);
    if (!in || in.peek() == std::ifstream::traits_type::eof()) return existing;
    existing.empty = false;
    std::getline(in, existing.first_line);
    in.clear();
    in.seekg(-1, std::ios::end);
    existing.ends_a_line = in.get() == '\n';
    return existing;
}

std::string header_of(const std::vector<unsigned>& gpu_indices) {
    std::string header = "start_time,window_name,elapsed_time";
    for (unsigned gpu : gpu_indices) header += fmt::format(",gpu{}_energy", gpu);
    return header;
}

// At most 80 characters of a line read from a user's file, valid UTF-8.
std::string shown(const std::string& line) {
    return line.size() > 80 ? to_utf8(line.substr(0, 77)) + "..." : to_utf8(line);
}

}  // namespace

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
    const std::string header = header_of(gpu_indices);
    const ExistingLog existing = read_existing(path);
    if (!existing.empty && existing.first_line != header) {
        return Error{ErrorCode::InvalidConfig,
                     fmt::format("log file {} is not a window log of these GPUs: its first line is '{}', this "
                                 "monitor writes '{}'",
                                 path, shown(existing.first_line), header),
                     "give another log file, or remove this one; a window log of the same GPUs is appended to", 0};
    }
    std::FILE* file = std::fopen(path.c_str(), "a");
    if (file == nullptr) {
        return Error{ErrorCode::InvalidConfig, fmt::format("cannot write log file {}: {}", path, std::strerror(errno)),
                     "choose a log file path you can write to", 0};
    }
    // A new file gets the header; an earlier log of the same GPUs keeps its
    // rows, and a row cut short (its writer was killed) is ended so that ours
    // starts a line of its own.
    const std::string opening = existing.empty ? header + "\n" : existing.ends_a_line ? "" : "\n";
    if (std::fputs(opening.c_str(), file) < 0 || std::fflush(file) != 0) {
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
