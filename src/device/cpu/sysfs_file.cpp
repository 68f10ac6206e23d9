#include "device/cpu/sysfs_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace zeus::rapl {
namespace {

// sysfs attributes are at most one page; /proc/<pid>/stat is well under that.
constexpr std::size_t kMaxFileBytes = 8192;

std::string errno_text(int err) {
    std::array<char, 128> buffer{};
    // GNU strerror_r returns the message (maybe not in buffer); XSI returns int.
    const auto* text = strerror_r(err, buffer.data(), buffer.size());
    return text;
}

// "mode 0400, owner uid 0": what the user needs to see to pick a fix.
std::string ownership(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return "mode unknown";
    return fmt::format("mode {:04o}, owner uid {}, group gid {}", st.st_mode & 07777U, st.st_uid, st.st_gid);
}

Error read_error(const std::string& path, int err) {
    if (err == EACCES || err == EPERM) {
        std::string why = fmt::format("cannot read {}: permission denied ({}; this process has uid {})", path,
                                      ownership(path), ::geteuid());
        if (path.find("energy_uj") != std::string::npos) {
            why += "; RAPL energy counters are readable by root only since the fix for CVE-2020-8694";
        }
        return Error{ErrorCode::NoPermission, std::move(why), permission_fixes(), err};
    }
    if (err == ENOENT || err == ENOTDIR) {
        return Error{ErrorCode::NotFound, fmt::format("{} does not exist", path), "", err};
    }
    return Error{ErrorCode::OperatingSystem, fmt::format("cannot read {}: {}", path, errno_text(err)), "", err};
}

template <class Int>
Result<Int> parse_number(const std::string& path, const char* what) {
    auto text = read_trimmed(path);
    if (!text) return text.error();
    Int value{};
    const char* first = text->data();
    const char* last = first + text->size();
    const auto [end, ec] = std::from_chars(first, last, value);
    if (text->empty() || ec != std::errc{} || end != last) {
        return Error{ErrorCode::InvalidState,
                     fmt::format("{} holds \"{}\", not {}", path, text->substr(0, 40), what),
                     "the kernel writes a decimal number there; if this is a test or container tree, fix the file", 0};
    }
    return value;
}

}  // namespace

std::string permission_fixes() {
    return "read it through the zeusd daemon, which runs privileged (docs/cpu-energy.md); or let a group read the "
           "counters: install packaging/udev/99-zeus-rapl.rules (new zones, e.g. after a module reload) and "
           "packaging/tmpfiles.d/zeus-rapl.conf (at boot), create the 'zeus' group and add your user to it; "
           "or run as root (in a container: as root, with the host's powercap mounted under /zeus_sys)";
}

Result<std::string> read_text_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return read_error(path, errno);
    std::string content;
    std::array<char, 512> buffer{};
    while (content.size() < kMaxFileBytes) {
        const ssize_t n = ::read(fd, buffer.data(), buffer.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            return read_error(path, err);
        }
        if (n == 0) break;
        content.append(buffer.data(), static_cast<std::size_t>(n));
    }
    ::close(fd);
    return content;
}

Result<std::string> read_trimmed(const std::string& path) {
    auto text = read_text_file(path);
    if (!text) return text.error();
    const auto begin = text->find_first_not_of(" \t\r\n");
    if (begin == std::string::npos) return std::string{};
    const auto end = text->find_last_not_of(" \t\r\n");
    return text->substr(begin, end - begin + 1);
}

Result<std::uint64_t> read_u64_file(const std::string& path) {
    return parse_number<std::uint64_t>(path, "an unsigned decimal number");
}

Result<std::int64_t> read_i64_file(const std::string& path) {
    return parse_number<std::int64_t>(path, "a decimal number");
}

}  // namespace zeus::rapl
