#include "http_server/unix_socket.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>


namespace zeus::http_server {
namespace {

// True when something accepts connections on the socket at `path`; `peer`
// is then its process id (0 when the kernel does not say).
bool socket_is_live(const std::string& path, int& connect_errno, pid_t& peer) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
    connect_errno = rc == 0 ? 0 : errno;
    ucred credentials{};
    socklen_t size = sizeof credentials;
    peer = rc == 0 && ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 ? credentials.pid : 0;
    ::close(fd);
    return rc == 0;
}

}  // namespace

Status prepare_socket_path(const std::string& path, const LogSink& log) {
    sockaddr_un probe{};
    if (path.empty() || path.size() >= sizeof probe.sun_path) {
        return Error{ErrorCode::InvalidConfig,
                     fmt::format("socket path '{}' is {} bytes; Unix socket paths must be 1 to {} bytes", path,
                                 path.size(), sizeof probe.sun_path - 1),
                     "choose a shorter socket path"};
    }
    struct stat info {};
    if (::lstat(path.c_str(), &info) == 0) {
        if (!S_ISSOCK(info.st_mode)) {
            return Error{ErrorCode::InvalidConfig, fmt::format("{} exists and is not a socket", path),
                         "the server never removes other files; pick another socket path or remove it yourself"};
        }
        int connect_errno = 0;
        pid_t peer = 0;
        if (socket_is_live(path, connect_errno, peer)) {
            return Error{ErrorCode::InUse,
                         fmt::format("another server{} is listening on {}; it was left alone",
                                     peer > 0 ? fmt::format(" (pid {})", peer) : std::string(), path),
                         "stop the other server first, or pick another socket path"};
        }
        if (connect_errno != ECONNREFUSED) {
            return Error{ErrorCode::OperatingSystem,
                         fmt::format("cannot tell whether the socket {} is in use: {}", path,
                                     std::strerror(connect_errno)),
                         "check the permissions of the socket and its directory"};
        }
        if (::unlink(path.c_str()) != 0) {
            return Error{ErrorCode::OperatingSystem,
                         fmt::format("cannot remove the stale socket {}: {}", path, std::strerror(errno)),
                         "remove it by hand, or run the server with permission to write its directory"};
        }
        if (log) log(LogLevel::Info, fmt::format("removed stale socket {}", path));
        return {};
    }
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) {
        std::error_code error;
        std::filesystem::create_directories(parent, error);
        if (error) {
            return Error{ErrorCode::OperatingSystem,
                         fmt::format("cannot create the socket directory {}: {}", parent.string(), error.message()),
                         "create it yourself or choose another socket path"};
        }
    }
    return {};
}

Result<mode_t> parse_socket_mode(const std::string& text) {
    if (text.empty() || text.size() > 4 || text.find_first_not_of("01234567") != std::string::npos) {
        return Error{ErrorCode::InvalidConfig, fmt::format("socket mode '{}' is not an octal mode", text),
                     "give octal digits such as 666 or 660"};
    }
    return static_cast<mode_t>(std::stoul(text, nullptr, 8));
}

Status set_socket_access(const std::string& path, mode_t mode, std::optional<uid_t> uid, std::optional<gid_t> gid) {
    if (::chmod(path.c_str(), mode) != 0) {
        return Error{ErrorCode::OperatingSystem,
                     fmt::format("cannot set mode {:o} on {}: {}", mode, path, std::strerror(errno)), ""};
    }
    if (uid || gid) {
        if (::chown(path.c_str(), uid ? *uid : static_cast<uid_t>(-1), gid ? *gid : static_cast<gid_t>(-1)) != 0) {
            return Error{ErrorCode::NoPermission,
                         fmt::format("cannot change the owner of {}: {}", path, std::strerror(errno)),
                         "run the server as root (or with CAP_CHOWN) to change the socket's owner"};
        }
    }
    return {};
}

}  // namespace zeus::http_server
