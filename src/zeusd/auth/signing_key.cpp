#include "zeusd/auth/signing_key.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
