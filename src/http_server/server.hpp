// The project's one HTTP/1.1 server (Boost.Beast on Asio), shared by every
// server binary: each gives only its Handler (its routes). Listeners on a
// Unix socket (peer credentials in Peer) or TCP, keep-alive sessions, request
// limits and timeouts (slow clients are dropped, not waited for),
// Server-Sent Events streams, and a stop that closes the listeners.
// docs/http-server.md shows how a new server uses it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "http_server/log_sink.hpp"
#include "http_server/message.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::http_server {

struct ServerLimits {
    std::size_t header_limit = 8 * 1024;
    std::uint64_t body_limit = 64 * 1024;
    // All connections' request bodies together, from a request's header to
    // its answer (a chunked body counts as body_limit). Over it a request
    // gets a 503 with Retry-After and is closed, so N clients sending large
    // bodies cost at most this much memory, not N x body_limit.
    std::uint64_t total_body_limit = 64 * 1024 * 1024;
    // From the first byte of a request (or the wait for one on an idle
    // keep-alive connection) to the last.
    std::chrono::milliseconds request_timeout{30000};
    // An event-stream reader that falls this far behind loses its oldest
    // events (only the latest values matter), so a client that never reads
    // costs a few KiB, not the ~190 KB a 1024-event queue held.
    std::size_t max_queued_events = 32;
    // Per peer: a Unix-socket user (uid), or a TCP client address. Over the
    // cap a connection gets a 503 and is closed; a stream request a 503.
    std::size_t max_connections_per_peer = 256;
    std::size_t max_event_streams_per_peer = 16;
    // When accept fails for want of descriptors (EMFILE/ENFILE), the pause
    // before the next try; the warning is written at most once per 10 s.
    std::chrono::milliseconds accept_retry{100};
};

struct ServerOptions {
    // The Server header of every response.
    std::string name = "zeus";
    ServerLimits limits;
    // Unset: warnings and errors go to stderr.
    LogSink log;
    // 0: connections are served on the threads that run `io`, one strand
    // each. N > 0: the server runs N threads of its own, each with an
    // io_context of its own and a share of the connections, and the handler
    // runs on them. A request then takes no lock and wakes no other thread
    // (with a strand, every read and write completion was handed to
    // whichever thread was free: a futex wake-up or two per request, the
    // largest part of a keep-alive request's CPU). `io` still accepts.
    unsigned session_threads = 0;
};

class Server {
  public:
    // `handler` runs on the threads that run `io`.
    Server(boost::asio::io_context& io, Handler handler, ServerOptions options = {});
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // "127.0.0.1:4938" or "[::1]:4938"; port 0 lets the kernel choose a free
    // one. Returns the port listened on.
    Result<unsigned short> listen_tcp(const std::string& address);
    // Binds a socket at `path`, which must not exist (see unix_socket.hpp).
    Status listen_unix(const std::string& path);
    // Stops accepting; open sessions end with their connections. With
    // session_threads, it also stops serving: no handler runs once it has
    // returned (so what the handler uses may be torn down next), and the
    // open connections are closed when the Server is destroyed.
    void stop();

    [[nodiscard]] std::size_t open_sessions() const;
    // Events waiting in all streams' queues for slow readers.
    [[nodiscard]] std::size_t queued_events() const;

    // What sessions and listeners share; outlives the Server while sessions run.
    struct Shared;
    class SessionThreads;

  private:
    class Listeners;

    boost::asio::io_context& io_;
    std::shared_ptr<Shared> shared_;
    std::unique_ptr<Listeners> listeners_;
    // Set when ServerOptions::session_threads > 0; its threads are stopped
    // and joined, and their connections closed, when the Server is destroyed.
    std::unique_ptr<SessionThreads> session_threads_;
};

}  // namespace zeus::http_server
