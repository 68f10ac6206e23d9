#include "zeusd/client_watcher.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <boost/asio/post.hpp>

#include "zeusd/log.hpp"

namespace zeus::zeusd {
namespace {

int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace

ClientWatcher::ClientWatcher(boost::asio::any_io_executor executor, std::function<void(pid_t)> on_exit)
    : executor_(std::move(executor)), on_exit_(std::move(on_exit)) {}

ClientWatcher::~ClientWatcher() {
    const std::lock_guard lock(mutex_);
    for (auto& [pid, descriptor] : watches_) {
        boost::system::error_code ignored;
        descriptor->close(ignored);
    }
}

void ClientWatcher::watch(pid_t pid) {
    const std::lock_guard lock(mutex_);
    if (watches_.contains(pid)) return;
    const int fd = open_pidfd(pid);
    if (fd < 0) {
        if (errno == ESRCH) {
            boost::asio::post(executor_, [this, pid] { on_exit_(pid); });
        } else {
            log::warn("cannot watch client pid {} ({}); its changes are undone only when zeusd stops", pid,
                      std::strerror(errno));
        }
        return;
    }
    auto descriptor = std::make_shared<boost::asio::posix::stream_descriptor>(executor_, fd);
    watches_.emplace(pid, descriptor);
    descriptor->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                           [this, pid, descriptor](const boost::system::error_code& error) {
                               if (error == boost::asio::error::operation_aborted) return;
                               {
                                   const std::lock_guard inner(mutex_);
                                   watches_.erase(pid);
                               }
                               boost::system::error_code ignored;
                               descriptor->close(ignored);
                               on_exit_(pid);
                           });
}

std::size_t ClientWatcher::watched() const {
    const std::lock_guard lock(mutex_);
    return watches_.size();
}

}  // namespace zeus::zeusd
