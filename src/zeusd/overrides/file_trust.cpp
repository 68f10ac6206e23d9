#include "zeusd/overrides/file_trust.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "zeus/platform/read_user_file.hpp"

namespace zeus::zeusd {
namespace {

// An override file is a few lines; anything this big is a mistake (a wrong
// path given to --gpu-command-overrides).
constexpr std::size_t kMaxFileBytes = 1 << 20;
constexpr UserInput kOverrideFile{"GPU command override file", "--gpu-command-overrides", kMaxFileBytes};

Error untrusted(std::string message, std::string hint) {
    return Error{ErrorCode::InvalidConfig, std::move(message), std::move(hint)};
}

}  // namespace

Result<TrustedFile> read_trusted_file(const std::string& path, uid_t daemon_euid) {
    // The owner and mode are checked on the descriptor that is then read, so
    // the file cannot be swapped in between.
    const UserFileHandle handle = open_user_file(path, kMaxFileBytes);
    if (!handle.ok()) return user_file_error(path, kOverrideFile, handle.problem(), handle.detail());
    const struct stat& info = handle.info();
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
    UserFileText text = read_open_user_file(handle, kMaxFileBytes);
    if (!text.ok()) return user_file_error(path, kOverrideFile, text.problem, text.detail);
    file.contents = std::move(text.text);
    return file;
}

}  // namespace zeus::zeusd
