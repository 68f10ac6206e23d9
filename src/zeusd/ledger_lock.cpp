#include "zeusd/ledger_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace zeus::zeusd {
namespace {

// What the holder wrote ("pid 123, listening on /run/zeusd.sock"), or a
// placeholder when it has not written it yet.
std::string holder_of(int fd) {
    char buffer[512] = {};
    const auto n = ::pread(fd, buffer, sizeof buffer - 1, 0);
    std::string text = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text.empty() ? std::string("a zeusd that is still starting") : text;
}

void record_holder(int fd, const std::string& listener) {
    const std::string text = fmt::format("pid {}, listening on {}\n", ::getpid(), listener);
    // Only a message for a second daemon: a failed write costs its detail, not the lock.
    if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, text.data(), text.size(), 0);
}

}  // namespace

std::filesystem::path LedgerLock::lock_path(const std::filesystem::path& ledger_path) {
    return ledger_path.string() + ".lock";
}

Result<LedgerLock> LedgerLock::acquire(const std::filesystem::path& ledger_path, const std::string& listener) {
    const auto path = lock_path(ledger_path);
    // Close-on-exec: a command override's child must not keep the lock after zeusd is gone.
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        return Error{ErrorCode::NoPermission,
                     fmt::format("cannot open the restore ledger's lock {}: {}", path.string(), std::strerror(errno)),
                     "zeusd locks it so that a second zeusd never undoes a live one's GPU changes; pass a "
                     "writable --restore-ledger PATH"};
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        const std::string holder = error == EWOULDBLOCK ? holder_of(fd) : std::string();
        ::close(fd);
        if (error != EWOULDBLOCK) {
            return Error{
                ErrorCode::OperatingSystem,
                fmt::format("cannot lock the restore ledger's lock {}: {}", path.string(), std::strerror(error)),
                "put --restore-ledger on a local file system that supports flock"};
        }
        return Error{ErrorCode::InUse,
                     fmt::format("another zeusd ({}) holds the restore ledger {}; this one stopped before changing "
                                 "any GPU, and left that zeusd, its ledger and its clients' GPU settings alone",
                                 holder, ledger_path.string()),
                     "stop the running zeusd first (systemctl stop zeusd), or give this one its own --socket-path "
                     "and --restore-ledger"};
    }
    record_holder(fd, listener);
    return LedgerLock(fd);
}

LedgerLock::LedgerLock(LedgerLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

LedgerLock& LedgerLock::operator=(LedgerLock&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

LedgerLock::~LedgerLock() {
    if (fd_ >= 0) ::close(fd_);
}

}  // namespace zeus::zeusd
