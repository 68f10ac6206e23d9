#include "zeusd/auth/signing_key.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>

#include <fmt/format.h>

#include "zeus/platform/read_user_file.hpp"

namespace zeus::zeusd {
namespace {

std::string create_hint(const std::string& path) {
    return fmt::format("create a key with `openssl rand -out {} 32` and `chmod 600 {}`", path, path);
}

// A key is usually 32 random bytes (any length works); a file over 1 MiB is
// a wrong path.
constexpr std::uintmax_t kMaxKeyBytes = 1 << 20;
constexpr UserInput kKeyFile{"signing key file", "--signing-key-path", kMaxKeyBytes};

Error read_error(const std::string& path, UserFileProblem problem, const std::string& detail) {
    Error error = user_file_error(path, kKeyFile, problem, detail);
    if (problem == UserFileProblem::Unreadable) {
        error.hint = "run zeusd as a user that can read the key (usually root), or fix the file's owner and mode";
    } else {
        error.hint += "; " + create_hint(path);
    }
    return error;
}

}  // namespace

Result<std::string> load_signing_key(const std::string& path) {
    const UserFileHandle handle = open_user_file(path, kMaxKeyBytes);
    if (!handle.ok()) return read_error(path, handle.problem(), handle.detail());
    // Whoever can read the key can mint gpu-control tokens: it must be the
    // daemon's alone, as the override file must be (file_trust.cpp).
    const struct stat& info = handle.info();
    const unsigned mode = info.st_mode & 0777;
    if ((mode & 077) != 0) {
        return Error{ErrorCode::InvalidConfig,
                     fmt::format("signing key file '{}' can be read or changed by other users (mode {:o}); "
                                 "anyone who reads it can mint tokens, gpu-control included",
                                 path, mode),
                     fmt::format("make it owner-only: chmod 600 '{}'", path)};
    }
    if (info.st_uid != 0 && info.st_uid != ::geteuid()) {
        return Error{ErrorCode::InvalidConfig,
                     fmt::format("signing key file '{}' is owned by uid {}, who could mint tokens with it; "
                                 "it must belong to root or the user running zeusd (uid {})",
                                 path, info.st_uid, ::geteuid()),
                     fmt::format("chown root '{}'", path)};
    }
    UserFileText key = read_open_user_file(handle, kMaxKeyBytes);
    if (!key.ok()) return read_error(path, key.problem, key.detail);
    if (key.text.empty()) {
        return Error{ErrorCode::InvalidConfig, fmt::format("signing key file '{}' is empty", path),
                     "write a random secret into it: " + create_hint(path)};
    }
    return std::move(key.text);
}

}  // namespace zeus::zeusd
