#include "zeusd/auth/signing_key.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

namespace zeus::zeusd {
namespace {

std::string create_hint(const std::string& path) {
    return fmt::format("create a key with `openssl rand -out {} 32` and `chmod 600 {}`", path, path);
}

Error read_error(const std::string& path, int error_number) {
    const bool missing = error_number == ENOENT || error_number == ENOTDIR;
    const bool denied = error_number == EACCES || error_number == EPERM;
    std::string hint = missing ? "check --signing-key-path; " + create_hint(path)
                       : denied ? "run zeusd as a user that can read the key (usually root), or fix the file's owner and mode"
                                : "--signing-key-path must name a regular file holding the key bytes; " + create_hint(path);
    return Error{missing ? ErrorCode::NotFound : denied ? ErrorCode::NoPermission : ErrorCode::InvalidConfig,
                 fmt::format("cannot read signing key file '{}': {}", path, std::strerror(error_number)),
                 std::move(hint)};
}

}  // namespace

Result<std::string> load_signing_key(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return read_error(path, errno);
    // Whoever can read the key can mint gpu-control tokens: it must be the
    // daemon's alone, as the override file must be (file_trust.cpp).
    struct stat info {};
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
        const unsigned mode = info.st_mode & 0777;
        std::optional<Error> untrusted;
        if ((mode & 077) != 0) {
            untrusted = Error{ErrorCode::InvalidConfig,
                              fmt::format("signing key file '{}' can be read or changed by other users (mode {:o}); "
                                          "anyone who reads it can mint tokens, gpu-control included",
                                          path, mode),
                              fmt::format("make it owner-only: chmod 600 '{}'", path)};
        } else if (info.st_uid != 0 && info.st_uid != ::geteuid()) {
            untrusted = Error{ErrorCode::InvalidConfig,
                              fmt::format("signing key file '{}' is owned by uid {}, who could mint tokens with it; "
                                          "it must belong to root or the user running zeusd (uid {})",
                                          path, info.st_uid, ::geteuid()),
                              fmt::format("chown root '{}'", path)};
        }
        if (untrusted) {
            ::close(fd);
            return *untrusted;
        }
    }

    std::string key;
    char buffer[4096];
    while (true) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            const int error_number = errno;  // before close() can change it
            ::close(fd);
            return read_error(path, error_number);
        }
        if (got == 0) break;
        key.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(fd);

    if (key.empty()) {
        return Error{ErrorCode::InvalidConfig, fmt::format("signing key file '{}' is empty", path),
                     "write a random secret into it: " + create_hint(path)};
    }
    return key;
}

}  // namespace zeus::zeusd
