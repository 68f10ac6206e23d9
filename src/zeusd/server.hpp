// The HTTP/1.1 server (Boost.Beast on Asio): listeners on a Unix socket or
// TCP, keep-alive sessions that hand each request to the Router, and
// Server-Sent Events sessions fed by PowerStreams. Bounded everywhere: header
// and body sizes, the time a request may take to arrive (slow clients are
// dropped, not waited for), the events queued for a slow reader.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "zeus/platform/error.hpp"
#include "zeusd/power_streams.hpp"
#include "zeusd/router.hpp"

namespace zeus::zeusd {

struct ServerLimits {
    std::size_t header_limit = 8 * 1024;
    std::uint64_t body_limit = 64 * 1024;
    // From the first byte of a request (or the wait for one on an idle
    // keep-alive connection) to the last.
    std::chrono::milliseconds request_timeout{30000};
    // An SSE reader that falls this far behind loses its oldest events
    // (only the latest values matter).
    std::size_t max_queued_events = 1024;
};

class Server {
  public:
    Server(boost::asio::io_context& io, const Router& router, PowerStreams* streams, ServerLimits limits = {});
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // "127.0.0.1:4938" or "[::1]:4938".
    Status listen_tcp(const std::string& address);
    // Binds a socket at `path`, which must not exist (see unix_socket.hpp).
    Status listen_unix(const std::string& path);
    // Stops accepting; open sessions end with their connections.
    void stop();

    [[nodiscard]] std::size_t open_sessions() const { return counters_->open_sessions.load(); }

    struct Counters {
        std::atomic<std::size_t> open_sessions{0};
        std::atomic<std::uint64_t> next_connection_id{1};
    };

  private:
    class Listeners;

    boost::asio::io_context& io_;
    const Router& router_;
    PowerStreams* streams_;
    ServerLimits limits_;
    std::shared_ptr<Counters> counters_;
    std::unique_ptr<Listeners> listeners_;
};

}  // namespace zeus::zeusd
