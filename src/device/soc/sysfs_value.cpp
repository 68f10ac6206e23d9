#include "device/soc/sysfs_value.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace zeus::soc {
namespace {

// Sysfs attributes are at most a page; power monitor values are a few bytes.
constexpr std::size_t kMaxAttributeBytes = 4096;

Error errno_error(const std::filesystem::path& path, int err) {
    const std::string what = fmt::format("reading {} failed: {}", path.string(), std::strerror(err));
    switch (err) {
        case ENOENT:
            return Error{ErrorCode::NotFound, what,
                         fmt::format("the file disappeared after discovery (driver unbound or device removed?): "
                                     "check `ls {}` and reopen the SoC once it is back",
                                     path.parent_path().string()),
                         0};
        case EACCES:
        case EPERM:
            return Error{ErrorCode::NoPermission, what,
                         "make the power monitor attributes readable for this user (e.g. a udev rule with "
                         "MODE=\"0444\"), or run as root",
                         0};
        default:
            return Error{ErrorCode::OperatingSystem, what,
                         "the power monitor's I2C read may have failed; if this persists, look for ina3221 "
                         "errors in `dmesg`",
                         0};
    }
}

std::string_view trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t\r\n");
    return s.substr(first, last - first + 1);
}

}  // namespace

Result<std::string> read_sysfs_text(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_error(path, errno);
    std::array<char, kMaxAttributeBytes> buffer{};
    std::size_t used = 0;
    while (used < buffer.size()) {
        const ssize_t n = ::read(fd, buffer.data() + used, buffer.size() - used);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            return errno_error(path, err);
        }
        used += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return std::string(trim(std::string_view(buffer.data(), used)));
}

Result<double> read_sysfs_number(const std::filesystem::path& path) {
    auto text = read_sysfs_text(path);
    if (!text) return text.error();
    const std::string& s = *text;
    const std::string hint = fmt::format(
        "the driver wrote something Zeus cannot parse; check `cat {}` and report it with the board model and "
        "L4T version (/etc/nv_tegra_release)",
        path.string());
    if (s.empty()) return Error{ErrorCode::NoData, fmt::format("{} is empty", path.string()), hint, 0};
    const char* begin = s.data();
    const char* end = s.data() + s.size();
    std::int64_t integer = 0;
    if (auto [p, ec] = std::from_chars(begin, end, integer); ec == std::errc() && p == end) {
        return static_cast<double>(integer);
    }
    double value = 0;
    if (auto [p, ec] = std::from_chars(begin, end, value, std::chars_format::fixed);
        ec == std::errc() && p == end && std::isfinite(value)) {
        return value;
    }
    return Error{ErrorCode::InvalidState, fmt::format("{} holds \"{}\", not a number", path.string(), s), hint, 0};
}

}  // namespace zeus::soc
