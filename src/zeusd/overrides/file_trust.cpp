#include "zeusd/overrides/file_trust.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace zeus::zeusd {
namespace {

// An override file is a few lines; anything this big is a mistake (a wrong
// path given to --gpu-command-overrides).
constexpr std::size_t kMaxFileBytes = 1 << 20;

Error open_error(const std::string& path, int error) {
    const auto code = error == ENOENT    ? ErrorCode::NotFound
                      : error == EACCES || error == EPERM ? ErrorCode::NoPermission
                                         : ErrorCode::OperatingSystem;
    return Error{code,
                 fmt::format("Failed to read GPU command override file '{}': {}", path, std::strerror(error)),
                 "check the path given to --gpu-command-overrides"};
}

Error untrusted(std::string message, std::string hint) {
    return Error{ErrorCode::InvalidConfig, std::move(message), std::move(hint)};
}

}  // namespace

Result<TrustedFile> read_trusted_file(const std::string& path, uid_t daemon_euid) {
    // O_NONBLOCK so that a FIFO at the path cannot hang start-up.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return open_error(path, errno);
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};

    struct stat info {};
    if (::fstat(fd, &info) != 0) return open_error(path, errno);
    if (!S_ISREG(info.st_mode)) {
        return untrusted(fmt::format("GPU command override file '{}' is not a regular file", path),
                         "point --gpu-command-overrides at a TOML file");
    }
    const unsigned mode = info.st_mode & 07777;
    if (info.st_uid != 0 && info.st_uid != daemon_euid) {
        return untrusted(
            fmt::format("GPU command override file '{}' is owned by uid {}; it must be owned by root or the "
                        "user running zeusd (uid {}) because zeusd executes the commands it defines",
                        path, info.st_uid, daemon_euid),
            fmt::format("chown root '{}'", path));
    }
    if ((mode & S_IWOTH) != 0) {
        return untrusted(
            fmt::format("GPU command override file '{}' is world-writable (mode {:o}); tighten its permissions "
                        "(e.g. chmod 644) because zeusd executes the commands it defines",
                        path, mode & 0777),
            fmt::format("chmod 644 '{}'", path));
    }

    TrustedFile file;
    if ((mode & S_IWGRP) != 0) {
        file.warnings.push_back(
            fmt::format("GPU command override file '{}' is group-writable (mode {:o}); anyone in the group can "
                        "change which commands zeusd executes",
                        path, mode & 0777));
    }
    std::array<char, 8192> buffer{};
    while (true) {
        const auto count = ::read(fd, buffer.data(), buffer.size());
        if (count == 0) break;
        if (count < 0) {
            if (errno == EINTR) continue;
            return open_error(path, errno);
        }
        file.contents.append(buffer.data(), static_cast<std::size_t>(count));
        if (file.contents.size() > kMaxFileBytes) {
            return untrusted(fmt::format("GPU command override file '{}' is larger than {} bytes", path,
                                         kMaxFileBytes),
                             "check the path given to --gpu-command-overrides");
        }
    }
    return file;
}

}  // namespace zeus::zeusd
