#include "zeusd/client_watcher.hpp"

#include <fcntl.h>
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

ClientWatcher::ClientWatcher(boost::asio::any_io_executor executor, std::function<void(ClientId)> on_exit)
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
    await_exit(pid, std::make_shared<boost::asio::posix::stream_descriptor>(executor_, fd));
}

ClientId ClientWatcher::identify(const http_server::Peer& peer) {
    if (peer.pid && *peer.pid > 0) {
        watch(*peer.pid);
        return *peer.pid;
    }
    if (!peer.process) return 0;
    const std::lock_guard lock(mutex_);
    if (auto known = hidden_clients_.find(peer.process->id()); known != hidden_clients_.end()) return known->second;
    // The connection keeps its own pidfd; the watch outlives the connection.
    const int fd = ::fcntl(peer.process->pidfd(), F_DUPFD_CLOEXEC, 3);
    if (fd < 0) {
        log::warn("cannot watch client {} ({}); its changes are undone only when zeusd stops", peer.describe(),
                  std::strerror(errno));
        return 0;
    }
    const ClientId client = --last_hidden_client_;
    hidden_clients_.emplace(peer.process->id(), client);
    log::info("client {} is client {} in zeusd's ledger", peer.describe(), client);
    await_exit(client, std::make_shared<boost::asio::posix::stream_descriptor>(executor_, fd));
    return client;
}

void ClientWatcher::await_exit(ClientId client, const Descriptor& descriptor) {
    watches_.emplace(client, descriptor);
    descriptor->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                           [this, client, descriptor](const boost::system::error_code& error) {
                               if (error == boost::asio::error::operation_aborted) return;
                               {
                                   const std::lock_guard inner(mutex_);
                                   watches_.erase(client);
                                   std::erase_if(hidden_clients_,
                                                 [client](const auto& entry) { return entry.second == client; });
                               }
                               boost::system::error_code ignored;
                               descriptor->close(ignored);
                               on_exit_(client);
                           });
}

std::size_t ClientWatcher::watched() const {
    const std::lock_guard lock(mutex_);
    return watches_.size();
}

}  // namespace zeus::zeusd
