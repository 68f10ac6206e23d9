// Notices when a client process ends, however it ends (kill -9 included):
// a pidfd becomes readable when its process exits, and Asio waits on it
// like on a socket, so no polling and no race with pid reuse. A client in
// another PID namespace (another pod, when zeusd runs without hostPID) has no
// pid here; it is watched through the pidfd its connection came with and
// named by a negative id of its own.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "http_server/message.hpp"
#include "zeusd/control_ledger.hpp"

namespace zeus::zeusd {

class ClientWatcher {
  public:
    ClientWatcher(boost::asio::any_io_executor executor, std::function<void(ClientId)> on_exit);
    ~ClientWatcher();
    ClientWatcher(const ClientWatcher&) = delete;
    ClientWatcher& operator=(const ClientWatcher&) = delete;

    // Starts watching `pid` unless already watched. A process that is
    // already gone is reported at once.
    void watch(pid_t pid);
    // The id a peer's changes are recorded under, its process watched: its
    // pid; for a process in another PID namespace a negative id, the same
    // for all its connections; 0 where neither is known (TCP).
    [[nodiscard]] ClientId identify(const http_server::Peer& peer);
    [[nodiscard]] std::size_t watched() const;

  private:
    using Descriptor = std::shared_ptr<boost::asio::posix::stream_descriptor>;
    // Under mutex_: reports `client` when `descriptor` (a pidfd) becomes readable.
    void await_exit(ClientId client, const Descriptor& descriptor);

    boost::asio::any_io_executor executor_;
    std::function<void(ClientId)> on_exit_;
    mutable std::mutex mutex_;
    std::map<ClientId, Descriptor> watches_;
    std::map<std::uint64_t, ClientId> hidden_clients_;  // pidfs inode -> its negative id
    ClientId last_hidden_client_ = 0;
};

}  // namespace zeus::zeusd
