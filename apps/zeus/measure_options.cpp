#include <CLI/CLI.hpp>
#include "measure_options.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

namespace zeus::cli {
namespace {

// What tells two output paths apart: the path with links resolved, and the
// file's device and inode when it exists.
struct OutputIdentity {
    std::filesystem::path path;
    std::optional<std::pair<dev_t, ino_t>> inode;
    bool shareable = false;  // a character device such as /dev/null
};

OutputIdentity identify_output(const std::string& path) {
    OutputIdentity id;
    std::error_code ec;
    id.path = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
    if (ec) id.path = std::filesystem::path(path).lexically_normal();
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
        id.inode = std::pair{st.st_dev, st.st_ino};
        id.shareable = S_ISCHR(st.st_mode);
    }
    return id;
}

}  // namespace

Result<OutputFormat> parse_format(std::string_view text) { return report::parse_output_format("--format", text); }

Result<std::optional<std::vector<unsigned>>> parse_index_list(std::string_view option, std::string_view text) {
    auto trimmed = [](std::string_view s) {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
        return s;
    };
    text = trimmed(text);
    if (text == "all") return std::optional<std::vector<unsigned>>{};
    if (text == "none") return std::optional<std::vector<unsigned>>{std::vector<unsigned>{}};
    if (text.empty()) {
        return Error{ErrorCode::InvalidArgument, fmt::format("{} is empty", option),
                     "give indices such as 0,2, or all, or none"};
    }
    std::vector<unsigned> indices;
    std::size_t entry = 0;
    while (true) {
        ++entry;
        const auto comma = text.find(',');
        const std::string_view item = trimmed(text.substr(0, comma));
        unsigned value = 0;
        const auto* end = item.data() + item.size();
        const auto [ptr, ec] = std::from_chars(item.data(), end, value);
        if (item.empty() || ec != std::errc() || ptr != end) {
            return Error{ErrorCode::InvalidArgument,
                         item.empty() ? fmt::format("{} {}: entry {} is empty", option, text, entry)
                                      : fmt::format("{} {}: \"{}\" is not a device index", option, text, item),
                         "give non-negative indices separated by commas, such as 0,2, or all, or none"};
        }
        if (std::find(indices.begin(), indices.end(), value) != indices.end()) {
            return Error{ErrorCode::InvalidArgument,
                         fmt::format("{} {}: index {} is listed twice", option, text, value),
                         "list each device once"};
        }
        indices.push_back(value);
        if (comma == std::string_view::npos) break;
        text = text.substr(comma + 1);
    }
    return std::optional<std::vector<unsigned>>{std::move(indices)};
}

std::string index_range(std::size_t count) {
    if (count == 0) return "none";
    if (count == 1) return "0";
    return fmt::format("0-{}", count - 1);
}

Status check_indices(std::string_view option, std::string_view device_word, const std::vector<unsigned>& indices,
                     std::size_t count, std::string_view why_none) {
    for (unsigned index : indices) {
        if (index < count) continue;
        if (count == 0) {
            return Error{ErrorCode::NotFound,
                         fmt::format("{}: no {} {}: there are no {}s{}{}", option, device_word, index, device_word,
                                     why_none.empty() ? "" : ": ", why_none),
                         fmt::format("leave {} out, or use {} none", option, option)};
        }
        return Error{ErrorCode::NotFound,
                     fmt::format("{}: no {} {}; the valid indices are {}", option, device_word, index,
                                 index_range(count)),
                     fmt::format("pick {}s among {}", device_word, index_range(count))};
    }
    return {};
}

Result<PowerDomain> parse_power_domain(std::string_view text) {
    if (text == "device_instant") return PowerDomain::DeviceInstant;
    if (text == "device_average") return PowerDomain::DeviceAverage;
    if (text == "memory_average") return PowerDomain::MemoryAverage;
    return Error{ErrorCode::InvalidArgument, fmt::format("--power-domain {}: unknown power domain", text),
                 "use device_instant, device_average or memory_average"};
}

Status check_writable(std::string_view option, const std::string& path) {
    if (path.empty()) {
        return Error{ErrorCode::InvalidArgument, fmt::format("{} needs a file name", option), ""};
    }
    bool created = true;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);  // NOLINT: POSIX varargs
    if (fd < 0 && errno == EEXIST) {
        created = false;
        fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);  // NOLINT: POSIX varargs
    }
    if (fd < 0) {
        const int err = errno;
        return Error{err == EACCES || err == EPERM ? ErrorCode::NoPermission : ErrorCode::NotFound,
                     fmt::format("{} {}: cannot write the file: {}", option, path, std::strerror(err)),
                     "give a path in an existing directory that you may write to"};
    }
    ::close(fd);
    // Leave nothing behind if a later check fails; the file is created again when written.
    if (created) ::unlink(path.c_str());
    return {};
}

Status check_distinct_outputs(const std::vector<NamedOutput>& outputs) {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        if (outputs[i].path.empty()) continue;
        const OutputIdentity first = identify_output(outputs[i].path);
        for (std::size_t j = i + 1; j < outputs.size(); ++j) {
            if (outputs[j].path.empty()) continue;
            const OutputIdentity second = identify_output(outputs[j].path);
            if (first.shareable || second.shareable) continue;
            if (first.path != second.path && !(first.inode && first.inode == second.inode)) continue;
            return Error{ErrorCode::InvalidArgument,
                         fmt::format("{} {} and {} {} name the same file: one would overwrite the other",
                                     outputs[i].option, outputs[i].path, outputs[j].option, outputs[j].path),
                         "give each output its own path"};
        }
    }
    return {};
}

}  // namespace zeus::cli
