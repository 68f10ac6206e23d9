// What a server built on the HTTP server component works on: a parsed
// request, who sent it, and the answer to send -- a whole response or an
// event stream. Kept free of sockets so that a server's handler can be driven
// by tests and fuzzers without a listener.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace zeus::http_server {

namespace http = boost::beast::http;
// Method, target (path and query as sent), headers and body, as Beast parsed them.
using Request = http::request<http::string_body>;

// A Unix-socket peer's process when its pid is not visible here (it runs in
// another PID namespace, e.g. another pod, so SO_PEERCRED says pid 0): a
// pidfd from SO_PEERPIDFD, readable once the process exits, and the pidfd's
// inode, which tells processes apart for as long as the system runs (pidfs).
class PeerProcess {
  public:
    PeerProcess(int pidfd, std::uint64_t id) : pidfd_(pidfd), id_(id) {}
    ~PeerProcess();
    PeerProcess(const PeerProcess&) = delete;
    PeerProcess& operator=(const PeerProcess&) = delete;

    [[nodiscard]] int pidfd() const { return pidfd_; }
    [[nodiscard]] std::uint64_t id() const { return id_; }

  private:
    int pidfd_;
    std::uint64_t id_;
};

// The other end of a connection. Unix sockets tell who it is (SO_PEERCRED);
// TCP connections only tell the address.
struct Peer {
    std::uint64_t connection_id = 0;
    std::optional<pid_t> pid;  // 0: the process is in another PID namespace (see `process`)
    std::optional<uid_t> uid;
    std::optional<gid_t> gid;
    std::string address;  // "unix" or "127.0.0.1:51234"
    std::shared_ptr<const PeerProcess> process;  // only where pid is 0 and the kernel has SO_PEERPIDFD

    // "pid 123 uid 1000 gid 1000" or the address, for logs.
    [[nodiscard]] std::string describe() const;
};

// Receives one Server-Sent Event's data (the server frames it as
// `data: <text>\n\n`). Callable from any thread, never blocks: a reader that
// falls behind loses its oldest events (ServerLimits::max_queued_events).
using EventSink = std::function<void(std::string data)>;

// Ends a subscription when destroyed (the client hung up or the server stopped).
class EventSubscription {
  public:
    virtual ~EventSubscription() = default;
};

// Where an event stream's events come from. The server calls subscribe()
// once the response header is on its way; a null result ends the stream.
class EventSource {
  public:
    virtual ~EventSource() = default;
    [[nodiscard]] virtual std::unique_ptr<EventSubscription> subscribe(EventSink sink) = 0;
};

struct Response {
    http::status status = http::status::ok;
    std::string content_type = "application/json";
    std::string body;
    // Sent as given, after Server and Content-Type.
    std::vector<std::pair<std::string, std::string>> headers;
    // Set: answer 200 text/event-stream and keep the connection for events.
    std::shared_ptr<EventSource> stream;

    [[nodiscard]] static Response json(std::string body, http::status status = http::status::ok);
    // Plain text, UTF-8.
    [[nodiscard]] static Response text(http::status status, std::string body);
    // 200 with no body and no Content-Type.
    [[nodiscard]] static Response empty_ok();
    [[nodiscard]] static Response event_stream(std::shared_ptr<EventSource> source);
};

// Answers one request; call it exactly once, from any thread (later calls
// are ignored).
using Respond = std::function<void(Response)>;

// A server's routes: called on a server thread for each parsed request.
// It may answer at once or later (from another thread) through `respond`.
// An exception it throws becomes a 500 for that request only.
using Handler = std::function<void(const Request& request, const Peer& peer, Respond respond)>;

// A request target "/path?query" split at its first '?' (the query is empty
// when there is none), neither part decoded: every server's routes start here.
struct TargetParts {
    std::string_view path;
    std::string_view query;
};
[[nodiscard]] TargetParts split_target(std::string_view target);

}  // namespace zeus::http_server
