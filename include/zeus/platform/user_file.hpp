// Reading a file a user named (a flag, an environment variable, a config
// value): the one place that says which problem a path has, so that no reader
// aborts on a directory, hangs on a FIFO, reads a 1 GB file whole before
// rejecting it or prints a bare exception name. Header-only and free of
// libzeus, like src/platform/csv_line.hpp, so the GPU simulator reads its traces and
// config by the same rule; libzeus code turns a problem into an Error with
// read_user_file() (zeus/platform/read_user_file.hpp).
//
// The size limit is checked before anything is read (st_size of a regular
// file), and again while reading, for files whose size the kernel does not
// know in advance (/proc): nothing past max_bytes + 1 is ever read.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace zeus {

// The documented limit of every input file (docs/cli.md, "Input files"):
// profiles, solutions, traces, logs and carbon/price series are far smaller;
// anything bigger is a wrong path.
inline constexpr std::uintmax_t kUserFileMaxBytes = std::uintmax_t{64} << 20;

enum class UserFileProblem {
    None,
    Missing,     // no such file (or a path component is not a directory)
    Directory,   // a directory where a file is expected
    NotRegular,  // a FIFO, socket or device: could block or never end
    Unreadable,  // exists but this user may not read it, or reading failed
    TooLarge,    // over the size limit, refused before reading
};

// An open regular file, or the reason there is none. Closes on destruction.
class UserFileHandle {
  public:
    UserFileHandle() = default;
    UserFileHandle(const UserFileHandle&) = delete;
    UserFileHandle& operator=(const UserFileHandle&) = delete;
    UserFileHandle(UserFileHandle&& other) noexcept { *this = std::move(other); }
    UserFileHandle& operator=(UserFileHandle&& other) noexcept {
        if (this != &other) {
            close();
            fd_ = other.fd_;
            info_ = other.info_;
            problem_ = other.problem_;
            detail_ = std::move(other.detail_);
            other.fd_ = -1;
        }
        return *this;
    }
    ~UserFileHandle() { close(); }

    [[nodiscard]] bool ok() const { return problem_ == UserFileProblem::None; }
    [[nodiscard]] int fd() const { return fd_; }
    [[nodiscard]] const struct stat& info() const { return info_; }
    [[nodiscard]] UserFileProblem problem() const { return problem_; }
    // What is wrong, without the path: "is a directory, not a file".
    [[nodiscard]] const std::string& detail() const { return detail_; }

    void fail(UserFileProblem problem, std::string detail) {
        close();
        problem_ = problem;
        detail_ = std::move(detail);
    }
    void adopt(int fd, const struct stat& info) {
        fd_ = fd;
        info_ = info;
    }

  private:
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    int fd_ = -1;
    struct stat info_ {};
    UserFileProblem problem_ = UserFileProblem::None;
    std::string detail_;
};

// "1.0 GiB", "64 MiB", "512 bytes".
inline std::string describe_byte_count(std::uintmax_t bytes) {
    char text[64];
    if (bytes >= (std::uintmax_t{1} << 30)) {
        std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(1ULL << 30));
    } else if (bytes >= (std::uintmax_t{1} << 20)) {
        std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(1ULL << 20));
    } else {
        std::snprintf(text, sizeof text, "%ju bytes", bytes);
    }
    return text;
}

// `size` unknown: a file that grew past the limit while it was read.
inline std::string user_file_limit_detail(std::optional<std::uintmax_t> size, std::uintmax_t max_bytes) {
    const std::string limit = "the limit of " + describe_byte_count(max_bytes) + " for this input (a wrong path?)";
    if (!size) return "is longer than " + limit;
    return "is " + describe_byte_count(*size) + ", over " + limit;
}

// Opens `path` for reading and checks, before any read, that it is a regular
// file of at most `max_bytes`. O_NONBLOCK: opening a FIFO must not hang.
inline UserFileHandle open_user_file(const std::string& path, std::uintmax_t max_bytes = kUserFileMaxBytes) {
    UserFileHandle handle;
    if (path.empty()) {
        handle.fail(UserFileProblem::Missing, "is an empty path");
        return handle;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        const int error = errno;
        if (error == ENOENT || error == ENOTDIR) {
            handle.fail(UserFileProblem::Missing, "does not exist");
        } else if (error == EISDIR) {
            handle.fail(UserFileProblem::Directory, "is a directory, not a file");
        } else {
            handle.fail(UserFileProblem::Unreadable, std::string("cannot be opened: ") + std::strerror(error));
        }
        return handle;
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        const int error = errno;
        ::close(fd);
        handle.fail(UserFileProblem::Unreadable, std::string("cannot be examined: ") + std::strerror(error));
        return handle;
    }
    handle.adopt(fd, info);
    if (S_ISDIR(info.st_mode)) {
        handle.fail(UserFileProblem::Directory, "is a directory, not a file");
    } else if (S_ISFIFO(info.st_mode)) {
        handle.fail(UserFileProblem::NotRegular, "is a FIFO (named pipe), not a regular file");
    } else if (S_ISSOCK(info.st_mode)) {
        handle.fail(UserFileProblem::NotRegular, "is a socket, not a regular file");
    } else if (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode)) {
        handle.fail(UserFileProblem::NotRegular, "is a device, not a regular file");
    } else if (!S_ISREG(info.st_mode)) {
        handle.fail(UserFileProblem::NotRegular, "is not a regular file");
    } else if (static_cast<std::uintmax_t>(info.st_size) > max_bytes) {
        handle.fail(UserFileProblem::TooLarge,
                    user_file_limit_detail(static_cast<std::uintmax_t>(info.st_size), max_bytes));
    } else {
        // Reads block as usual from here on.
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    }
    return handle;
}

// The whole text of a file opened by open_user_file, at most max_bytes; a
// file that turns out longer than its size said is refused, not truncated.
struct UserFileText {
    std::string text;
    UserFileProblem problem = UserFileProblem::None;
    std::string detail;  // as UserFileHandle::detail()
    [[nodiscard]] bool ok() const { return problem == UserFileProblem::None; }
};

inline UserFileText read_open_user_file(const UserFileHandle& handle, std::uintmax_t max_bytes = kUserFileMaxBytes) {
    UserFileText out;
    if (!handle.ok()) {
        out.problem = handle.problem();
        out.detail = handle.detail();
        return out;
    }
    out.text.reserve(static_cast<std::size_t>(handle.info().st_size));
    char buffer[65536];
    while (true) {
        const ssize_t got = ::read(handle.fd(), buffer, sizeof buffer);
        if (got == 0) break;
        if (got < 0) {
            if (errno == EINTR) continue;
            out.text.clear();
            out.problem = UserFileProblem::Unreadable;
            out.detail = std::string("cannot be read: ") + std::strerror(errno);
            return out;
        }
        if (out.text.size() + static_cast<std::size_t>(got) > max_bytes) {
            out.text.clear();
            out.problem = UserFileProblem::TooLarge;
            out.detail = user_file_limit_detail(std::nullopt, max_bytes);
            return out;
        }
        out.text.append(buffer, static_cast<std::size_t>(got));
    }
    return out;
}

inline UserFileText read_user_file_text(const std::string& path, std::uintmax_t max_bytes = kUserFileMaxBytes) {
    return read_open_user_file(open_user_file(path, max_bytes), max_bytes);
}

}  // namespace zeus
