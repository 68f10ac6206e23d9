#include "http_server/server.hpp"

#include "http_server/rate_limited_log.hpp"
#include "http_server/request_line.hpp"

#include <malloc.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <array>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

namespace zeus::http_server {
namespace {

}  // namespace

// io_contexts of one thread each; new connections are dealt out in turn.
class Server::SessionThreads {
  public:
    explicit SessionThreads(unsigned count) {
        for (unsigned i = 0; i < count; ++i) {
            contexts_.push_back(std::make_unique<boost::asio::io_context>(1));
            guards_.emplace_back(contexts_.back()->get_executor());
        }
        for (auto& context : contexts_) threads_.emplace_back([context = context.get()] { context->run(); });
    }
    // The contexts, destroyed after their threads, take their connections'
    // pending operations (and so the sessions) with them.
    ~SessionThreads() { stop(); }

    // No handler runs after this returns; what is posted to the contexts
    // later (a late answer from another thread) waits there, harmless, until
    // they are destroyed.
    void stop() {
        guards_.clear();
        for (auto& context : contexts_) context->stop();
        for (auto& thread : threads_) {
            if (thread.joinable()) thread.join();
        }
    }
    SessionThreads(const SessionThreads&) = delete;
    SessionThreads& operator=(const SessionThreads&) = delete;

    boost::asio::any_io_executor next() {
        return contexts_[next_.fetch_add(1, std::memory_order_relaxed) % contexts_.size()]->get_executor();
    }

  private:
    std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
    std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guards_;
    std::vector<std::thread> threads_;
    std::atomic<std::size_t> next_{0};
};

struct Server::Shared {
    Handler handler;
    ServerOptions options;
    std::atomic<std::size_t> open_sessions{0};
    std::atomic<std::size_t> queued_events{0};
    std::atomic<std::uint64_t> next_connection_id{1};
    // Bytes of request bodies being read or held, all connections together
    // (ServerLimits::total_body_limit).
    std::atomic<std::uint64_t> body_bytes{0};
    RateLimitedWarning accept_failures;
    RateLimitedWarning refused_connections;
    RateLimitedWarning refused_streams;
    RateLimitedWarning refused_bodies;
    RateLimitedWarning handler_failures;

    void log(LogLevel level, const std::string& message) const { options.log(level, message); }

    void warn_limited(RateLimitedWarning& warning, const std::string& message,
                      LogLevel level = LogLevel::Warn) const {
        warning.write(options.log, level, message);
    }

    // Takes `bytes` of the body budget; false (nothing taken) when they do not fit.
    bool reserve_body(std::uint64_t bytes) {
        auto held = body_bytes.load();
        do {
            if (held + bytes > options.limits.total_body_limit) return false;
        } while (!body_bytes.compare_exchange_weak(held, held + bytes));
        return true;
    }

    // Open connections and event streams per peer ("uid 1000", or the TCP
    // client's IP address). try_add refuses once `cap` is reached.
    class PeerCounts {
      public:
        bool try_add(const std::string& key, std::size_t cap) {
            const std::lock_guard lock(mutex_);
            auto& count = counts_[key];
            if (count >= cap) return false;
            ++count;
            return true;
        }
        void remove(const std::string& key) {
            const std::lock_guard lock(mutex_);
            const auto it = counts_.find(key);
            if (it != counts_.end() && --it->second == 0) counts_.erase(it);
        }

      private:
        std::mutex mutex_;
        std::map<std::string, std::size_t> counts_;
    };
    PeerCounts connections;
    PeerCounts streams;

    // The Server's session threads (ServerOptions::session_threads), null
    // without them and once the Server is gone; a listener may outlive it.
    std::mutex session_threads_mutex;
    Server::SessionThreads* session_threads = nullptr;
};

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using unix_socket = asio::local::stream_protocol;

// After refusing a request it has not read to its end, a session reads and
// drops what the client still sends for this long, or this much, before it
// closes (Session::refuse).
constexpr std::chrono::milliseconds kLingerTime{1000};
constexpr std::size_t kLingerBytes = 1 << 20;

// Whom the per-peer caps count against: the user of a Unix-socket peer, the
// address (without port) of a TCP one.
std::string peer_key(const Peer& peer) {
    if (peer.uid) return fmt::format("uid {}", *peer.uid);
    return peer.address.substr(0, peer.address.rfind(':'));
}

bool out_of_descriptors(const beast::error_code& error) {
    return error == asio::error::no_descriptors || error == asio::error::no_buffer_space ||
           error == asio::error::no_memory || error.value() == ENFILE;
}

// Linux 6.5; Debian 12's headers predate it.
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

// A peer in another PID namespace has pid 0 here; its pidfd still tells when
// it exits and, by its inode, which process it is. Older kernels: none.
std::shared_ptr<const PeerProcess> peer_process(int fd) {
    int pidfd = -1;
    socklen_t length = sizeof pidfd;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) != 0 || pidfd < 0) return nullptr;
    struct stat status {};
    if (::fstat(pidfd, &status) != 0) {
        ::close(pidfd);
        return nullptr;
    }
    return std::make_shared<const PeerProcess>(pidfd, static_cast<std::uint64_t>(status.st_ino));
}

// What to do about a TCP address that cannot be bound: the reasons need
// different fixes, and only one of them is the port.
std::string tcp_listen_fix(const beast::error_code& error) {
    switch (error.value()) {
        case EADDRINUSE:
            return "pick a free port, or stop the program listening there";
        case EADDRNOTAVAIL:
            return "the address is not one of this machine's (`ip addr` lists them; a link-local IPv6 address needs "
                   "its interface, e.g. [fe80::1%eth0]); 127.0.0.1, [::1], 0.0.0.0 and [::] always work";
        case EACCES:
            return "ports below 1024 need root (or CAP_NET_BIND_SERVICE): pick a port above 1023";
        default:
            return "check the address and the port";
    }
}

void fill_peer_credentials(int fd, Peer& peer) {
    ucred credentials{};
    socklen_t length = sizeof credentials;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0) {
        peer.pid = credentials.pid;
        peer.uid = credentials.uid;
        peer.gid = credentials.gid;
        if (credentials.pid == 0) peer.process = peer_process(fd);
    }
}

// A session's socket is bound to a strand of its own (see Listener::accept),
// so its handlers never run at the same time.
//
// Slow clients are dropped by one timer per session that is armed rarely:
// each request only moves `deadline_` (a clock read), and the timer, when it
// fires, either closes the connection or sleeps until the deadline now set.
// Arming a timer per read and write (beast::basic_stream's timeouts) cost a
// timer-queue insertion, a cancellation and a cancelled handler's dispatch
// for every operation: a fifth of zeusd's CPU per keep-alive request.
template <class Protocol>
class Session : public std::enable_shared_from_this<Session<Protocol>> {
  public:
    using Clock = std::chrono::steady_clock;

    // The caller has counted this connection against `peer_key` (see PeerCounts).
    Session(typename Protocol::socket socket, Peer peer, std::string peer_key, std::shared_ptr<Server::Shared> shared)
        : stream_(std::move(socket)),
          deadline_timer_(stream_.get_executor()),
          peer_(std::move(peer)),
          peer_key_(std::move(peer_key)),
          shared_(std::move(shared)),
          limits_(shared_->options.limits) {
        shared_->open_sessions.fetch_add(1);
    }
    ~Session() {
        shared_->queued_events.fetch_sub(events_.size());
        release_body();
        release_peer_slots();
        shared_->open_sessions.fetch_sub(1);
        if (held_large_body_) {
            parser_.reset();
            buffer_ = beast::flat_buffer{};
            ::malloc_trim(0);
        }
    }

    void start() {
        asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
            self->limit_time(self->limits_.request_timeout);
            self->watch_deadline();
            self->read_request();
        });
    }

  private:
    void read_request() {
        head_ = false;
        parser_.emplace();
        parser_->header_limit(static_cast<std::uint32_t>(limits_.header_limit));
        parser_->body_limit(limits_.body_limit);
        limit_time(limits_.request_timeout);
        http::async_read_header(stream_, buffer_, *parser_,
                                [self = this->shared_from_this()](beast::error_code error, std::size_t) {
                                    self->on_header(error);
                                });
    }

    void on_header(beast::error_code error) {
        if (error == http::error::bad_version) {
            // Still in the buffer: Beast consumes nothing of a request line it refuses.
            const auto bytes = buffer_.data();
            const std::span<char> unread(static_cast<char*>(bytes.data()), bytes.size());
            if (downgrade_minor_version(unread)) {
                read_request();
                return;
            }
            const auto status = status_for_bad_version(unread);
            if (status == http::status::http_version_not_supported) {
                version_ = 11;
                refuse(Response::text(status, "HTTP Version Not Supported: this server speaks HTTP/1.1 and 1.0"));
                return;
            }
        }
        if (error) {
            on_request(error);
            return;
        }
        auto& header = parser_->get();
        version_ = header.version();
        if (auto problem = host_problem(header)) {
            refuse(Response::text(http::status::bad_request, std::move(*problem)));
            return;
        }
        to_origin_form(header);
        if (const auto coding = header.find(http::field::transfer_encoding); coding != header.end()) {
            // Beast decodes chunked; a body in any other coding has no length we can trust (RFC 9112 6.1).
            if (!parser_->chunked()) {
                refuse(Response::text(
                    http::status::bad_request,
                    fmt::format("Bad Request: Transfer-Encoding '{}' does not end in chunked", coding->value())));
                return;
            }
            if (!beast::iequals(coding->value(), "chunked")) {
                refuse(Response::text(http::status::not_implemented,
                                      fmt::format("Not Implemented: Transfer-Encoding '{}'; send the body "
                                                  "uncompressed (chunked or with Content-Length)",
                                                  coding->value())));
                return;
            }
        }
        if (!reserve_body_budget()) return;
        const auto expect = header.find(http::field::expect);
        if (expect != header.end() && beast::iequals(expect->value(), "100-continue") && !parser_->is_done()) {
            // The client waits for this before sending the body (curl does for larger bodies).
            auto interim = std::make_shared<http::response<http::empty_body>>(http::status::continue_, version_);
            http::async_write(stream_, *interim,
                              [self = this->shared_from_this(), interim](beast::error_code write_error, std::size_t) {
                                  if (write_error) {
                                      self->close();
                                      return;
                                  }
                                  self->read_body();
                              });
            return;
        }
        read_body();
    }

    void read_body() {
        if (parser_->is_done()) {
            // No body (a GET): a second read would only post its completion.
            on_request({});
            return;
        }
        http::async_read(stream_, buffer_, *parser_,
                         [self = this->shared_from_this()](beast::error_code error, std::size_t) {
                             self->on_request(error);
                         });
    }

    // What a refused request can do instead: the limit it went over, and how to stay under it.
    [[nodiscard]] std::string limit_hint(beast::error_code error) const {
        if (error == http::error::header_limit) {
            return fmt::format(
                " (the request line and headers may take {} bytes: ask for fewer items per request, "
                "e.g. split a long gpu_ids list, or shorten the headers)",
                limits_.header_limit);
        }
        if (error == http::error::body_limit) {
            return fmt::format(" (a request body may take {} bytes: send less per request)", limits_.body_limit);
        }
        return {};
    }

    void on_request(beast::error_code error) {
        if (error == http::error::end_of_stream || error == asio::error::operation_aborted ||
            error == asio::error::connection_reset || error == asio::error::eof || closed_) {
            close();
            return;
        }
        if (error) {
            const auto status = error == http::error::header_limit ? http::status::request_header_fields_too_large
                                : error == http::error::body_limit ? http::status::payload_too_large
                                                                   : http::status::bad_request;
            auto response = Response::text(
                status, fmt::format("{}: {}{}", http::obsolete_reason(status), error.message(), limit_hint(error)));
            refuse(std::move(response));
            return;
        }
        // The handler may take its time (a blocking GPU command); the client is not slow meanwhile.
        limit_time(std::nullopt);
        request_ = parser_->release();
        // HEAD is GET without the body (RFC 9110 9.3.2): every route that
        // answers GET answers HEAD, with no handler knowing about it.
        if (request_.method() == http::verb::head) {
            head_ = true;
            request_.method(http::verb::get);
        }
        keep_alive_ = request_.keep_alive();
        version_ = request_.version();
        auto self = this->shared_from_this();
        auto answered = std::make_shared<std::atomic<bool>>(false);
        auto respond = [self, answered](Response response) {
            if (answered->exchange(true)) return;  // one answer per request
            asio::post(self->stream_.get_executor(),
                       [self, response = std::move(response)]() mutable { self->answer(std::move(response)); });
        };
        // A bug in one handler must cost one request, never the daemon.
        try {
            shared_->handler(request_, peer_, respond);
        } catch (const std::exception& failure) {
            // Rate-limited: a client repeating a request that fails must not flood the log.
            shared_->warn_limited(shared_->handler_failures,
                                  fmt::format("{} {} from {} failed: {}", request_.method_string(),
                                              sanitized_target(), peer_.describe(), failure.what()),
                                  LogLevel::Error);
            respond(Response::json(R"({"error":"internal error; see the server log"})",
                                   http::status::internal_server_error));
        }
    }

    void answer(Response response) {
        // The handler has answered: the request (and its body) is no longer needed.
        release_body();
        if (response.stream && head_) {
            response.stream.reset();
            response.content_type = "text/event-stream";
            response.body.clear();
        }
        if (response.stream) {
            if (!shared_->streams.try_add(peer_key_, limits_.max_event_streams_per_peer)) {
                shared_->warn_limited(shared_->refused_streams,
                                      fmt::format("refused an event stream to {}: it has {} open, the most one peer "
                                                  "may have",
                                                  peer_.describe(), limits_.max_event_streams_per_peer));
                send(Response::text(http::status::service_unavailable,
                                    fmt::format("Service Unavailable: at most {} event streams per user (or TCP "
                                                "address) at a time; close one first",
                                                limits_.max_event_streams_per_peer)),
                     false);
                return;
            }
            counts_stream_ = true;
            start_stream(std::move(response));
            return;
        }
        send(std::move(response), keep_alive_);
    }

    // An answer to a request that was not read to its end (refused for its
    // size or form): the client may still be sending it, and closing a
    // socket with unread data resets the connection, which can throw away
    // the answer before the client reads it. So the answer goes out, then
    // this side stops sending and drops what still comes (kLingerTime,
    // kLingerBytes at most) before it closes.
    void refuse(Response response) { send(std::move(response), false, true); }

    void send(Response response, bool keep_alive, bool linger = false) {
        auto message = std::make_shared<http::response<http::string_body>>(response.status, version_ ? version_ : 11);
        message->set(http::field::server, shared_->options.name);
        if (!response.content_type.empty()) message->set(http::field::content_type, response.content_type);
        for (const auto& [name, value] : response.headers) message->insert(name, value);
        message->body() = std::move(response.body);
        message->keep_alive(keep_alive);
        message->prepare_payload();
        // HEAD: GET's header, Content-Length included, and no body.
        if (head_) message->body().clear();
        // The request timeout covers reading a request; a handler may answer
        // much later (the Perseus server's schedule waits for every rank), so
        // the write gets a fresh one rather than failing at once.
        limit_time(limits_.request_timeout);
        http::async_write(
            stream_, *message,
            [self = this->shared_from_this(), message, keep_alive, linger](beast::error_code error, std::size_t) {
                if (!error && linger) {
                    self->linger_then_close();
                    return;
                }
                if (error || !keep_alive) {
                    self->close();
                    return;
                }
                self->read_request();
            });
    }

    void linger_then_close() {
        beast::error_code ignored;
        stream_.shutdown(Protocol::socket::shutdown_send, ignored);
        limit_time(kLingerTime);
        watch_deadline();  // re-armed: closes at the deadline, kLingerTime from now
        drain(0);
    }

    void drain(std::size_t drained) {
        stream_.async_read_some(asio::buffer(discard_),
                                [self = this->shared_from_this(), drained](beast::error_code error, std::size_t bytes) {
                                    if (error || drained + bytes > kLingerBytes) {
                                        self->close();
                                        return;
                                    }
                                    self->drain(drained + bytes);
                                });
    }

    void start_stream(Response response) {
        limit_time(std::nullopt);
        auto header = std::make_shared<http::response<http::empty_body>>(http::status::ok, version_);
        header->set(http::field::server, shared_->options.name);
        header->set(http::field::content_type, "text/event-stream");
        header->set(http::field::cache_control, "no-cache");
        for (const auto& [name, value] : response.headers) header->insert(name, value);
        header->chunked(true);
        auto serializer = std::make_shared<http::response_serializer<http::empty_body>>(*header);
        std::weak_ptr<Session> weak = this->shared_from_this();
        auto executor = stream_.get_executor();
        http::async_write_header(
            stream_, *serializer,
            [self = this->shared_from_this(), header, serializer, source = std::move(response.stream), weak,
             executor](beast::error_code error, std::size_t) {
                if (error) {
                    self->close();
                    return;
                }
                self->subscription_ = source->subscribe([weak, executor](std::string data) {
                    asio::post(executor, [weak, text = "data: " + std::move(data) + "\n\n"]() mutable {
                        if (auto session = weak.lock()) session->enqueue(std::move(text));
                    });
                });
                if (!self->subscription_) {
                    self->close();
                    return;
                }
                self->watch_for_hangup();
            });
    }

    // A stream's client sends nothing; a read that ends means it hung up.
    void watch_for_hangup() {
        stream_.async_read_some(asio::buffer(discard_),
                                [self = this->shared_from_this()](beast::error_code error, std::size_t) {
                                    if (error) {
                                        self->close();
                                        return;
                                    }
                                    self->watch_for_hangup();
                                });
    }

    void enqueue(std::string event) {
        if (closed_) return;
        if (events_.size() >= limits_.max_queued_events) {
            events_.pop_front();
            shared_->queued_events.fetch_sub(1);
        }
        events_.push_back(std::move(event));
        shared_->queued_events.fetch_add(1);
        if (!writing_) write_next_event();
    }

    void write_next_event() {
        writing_ = true;
        auto event = std::make_shared<std::string>(std::move(events_.front()));
        events_.pop_front();
        shared_->queued_events.fetch_sub(1);
        asio::async_write(stream_, http::make_chunk(asio::buffer(*event)),
                          [self = this->shared_from_this(), event](beast::error_code error, std::size_t) {
                              self->writing_ = false;
                              if (error) {
                                  self->close();
                                  return;
                              }
                              if (!self->events_.empty() && !self->closed_) self->write_next_event();
                          });
    }

    void close() {
        if (closed_) return;
        closed_ = true;
        subscription_.reset();
        shared_->queued_events.fetch_sub(events_.size());
        events_.clear();
        beast::error_code ignored;
        deadline_timer_.cancel();
        // Before the peer can see the close: a client that saw it may connect
        // again at once and must find its slot free (the Session itself may
        // outlive the close a while, on this or another thread).
        release_peer_slots();
        release_body();
        stream_.shutdown(Protocol::socket::shutdown_both, ignored);
        stream_.close(ignored);
    }

    // A request's body counts against the server's total_body_limit from
    // its header until its answer: Content-Length bytes, or body_limit for a
    // chunked body. Over the budget: 503 and close.
    bool reserve_body_budget() {
        const auto length = parser_->content_length();
        const std::uint64_t bytes =
            length ? std::min(*length, limits_.body_limit) : (parser_->chunked() ? limits_.body_limit : 0);
        if (bytes == 0) return true;
        if (shared_->reserve_body(bytes)) {
            body_reserved_ = bytes;
            return true;
        }
        shared_->warn_limited(shared_->refused_bodies,
                              fmt::format("refused a {}-byte request body from {}: the server is already holding {} "
                                          "bytes of request bodies, its limit",
                                          bytes, peer_.describe(), limits_.total_body_limit));
        auto response = Response::text(http::status::service_unavailable,
                                       "Service Unavailable: the server is reading too many large request bodies "
                                       "at once; retry in a second");
        response.headers.emplace_back("Retry-After", "1");
        refuse(std::move(response));
        return false;
    }

    void release_body() {
        const auto capacity = request_.body().capacity();
        request_ = {};
        if (buffer_.capacity() > kLargeBody) buffer_.shrink_to_fit();
        if (const auto bytes = std::exchange(body_reserved_, 0)) shared_->body_bytes.fetch_sub(bytes);
        // glibc keeps freed memory of large bodies in its arenas (RSS stayed
        // 180 MB after twelve 16 MiB bodies had gone): give it back, now and
        // once more when the connection's own buffers go.
        if (capacity > kLargeBody) {
            held_large_body_ = true;
            ::malloc_trim(0);
        }
    }

    // The target for a log line: bytes that are not printable ASCII as \xNN.
    [[nodiscard]] std::string sanitized_target() const {
        std::string out;
        for (const char c : request_.target()) {
            const auto byte = static_cast<unsigned char>(c);
            if (byte >= 0x20 && byte < 0x7F) out += c;
            else out += fmt::format("\\x{:02X}", byte);
        }
        return out;
    }

    void release_peer_slots() {
        if (std::exchange(counts_stream_, false)) shared_->streams.remove(peer_key_);
        if (std::exchange(counts_connection_, false)) shared_->connections.remove(peer_key_);
    }

    // From now on the connection may take `limit` (none: no limit) before it is dropped.
    void limit_time(std::optional<std::chrono::milliseconds> limit) {
        deadline_ = limit ? Clock::now() + *limit : Clock::time_point::max();
    }

    // While no deadline is set (a handler at work, a stream) the timer still
    // wakes once per request_timeout: a deadline set later (the answer's
    // write, the next request) must not wait behind a timer armed for never.
    void watch_deadline() {
        const auto poll = std::clamp<Clock::duration>(limits_.request_timeout, std::chrono::milliseconds(10),
                                                      std::chrono::hours(1));
        deadline_timer_.expires_at(std::min(deadline_, Clock::now() + poll));
        deadline_timer_.async_wait([weak = std::weak_ptr<Session>(this->shared_from_this())](beast::error_code error) {
            const auto self = weak.lock();
            if (error || !self || self->closed_) return;
            if (Clock::now() < self->deadline_) {
                self->watch_deadline();  // the deadline moved on meanwhile
                return;
            }
            self->shared_->log(LogLevel::Debug,
                               fmt::format("dropped a slow or idle connection from {}", self->peer_.describe()));
            self->close();
        });
    }

    typename Protocol::socket stream_;
    asio::steady_timer deadline_timer_;
    Clock::time_point deadline_ = Clock::time_point::max();
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    Request request_;
    bool keep_alive_ = false;
    unsigned version_ = 11;
    Peer peer_;
    std::string peer_key_;
    bool counts_connection_ = true;  // see the constructor
    bool counts_stream_ = false;
    std::shared_ptr<Server::Shared> shared_;
    const ServerLimits& limits_;
    std::unique_ptr<EventSubscription> subscription_;
    std::deque<std::string> events_;
    bool writing_ = false;
    bool closed_ = false;
    bool head_ = false;  // the request being answered is a HEAD
    std::uint64_t body_reserved_ = 0;  // of Shared::body_bytes
    bool held_large_body_ = false;
    static constexpr std::size_t kLargeBody = 1024 * 1024;
    std::array<char, 256> discard_{};
};

template <class Protocol>
class Listener : public std::enable_shared_from_this<Listener<Protocol>> {
  public:
    // `acceptor` runs on a strand of its own: accepting, the retry timer and
    // stop() never run at the same time.
    Listener(asio::io_context& io, typename Protocol::acceptor acceptor, std::shared_ptr<Server::Shared> shared)
        : io_(io), acceptor_(std::move(acceptor)), retry_timer_(acceptor_.get_executor()), shared_(std::move(shared)) {}

    void start() { accept(); }
    void stop() {
        asio::post(acceptor_.get_executor(), [self = this->shared_from_this()] {
            beast::error_code ignored;
            self->acceptor_.close(ignored);
            self->retry_timer_.cancel();
        });
    }

  private:
    void accept() {
        // With session threads the socket only passes through `io` (a plain executor will do).
        auto executor = shared_->options.session_threads > 0 ? asio::any_io_executor(io_.get_executor())
                                                              : asio::any_io_executor(asio::make_strand(io_));
        acceptor_.async_accept(executor, [self = this->shared_from_this()](
                                                           beast::error_code error, typename Protocol::socket socket) {
            if (error == asio::error::operation_aborted || !self->acceptor_.is_open()) return;
            if (!error) {
                self->open_session(std::move(socket));
                self->accept();
                return;
            }
            if (out_of_descriptors(error)) {
                // Accepting again at once fails again at once: a busy loop and a log flood. The
                // connection stays in the backlog; try again after a pause (a closing
                // connection frees a descriptor meanwhile).
                self->shared_->warn_limited(
                    self->shared_->accept_failures,
                    fmt::format("accept failed: {} with {} connections open; pausing new connections for {} ms at a "
                                "time until descriptors free up (raise the limit: LimitNOFILE= in the systemd unit, "
                                "ulimit -n)",
                                error.message(), self->shared_->open_sessions.load(),
                                self->shared_->options.limits.accept_retry.count()));
                self->retry_timer_.expires_after(self->shared_->options.limits.accept_retry);
                self->retry_timer_.async_wait([self](beast::error_code wait_error) {
                    if (!wait_error && self->acceptor_.is_open()) self->accept();
                });
                return;
            }
            self->shared_->warn_limited(self->shared_->accept_failures,
                                        fmt::format("accept failed: {}", error.message()));
            self->accept();
        });
    }

    // The peer already has as many connections as one may: a short 503, sent
    // without waiting (the socket buffer of a new connection has room), and close.
    void refuse(typename Protocol::socket& socket, const Peer& peer) {
        const auto cap = shared_->options.limits.max_connections_per_peer;
        shared_->warn_limited(shared_->refused_connections,
                              fmt::format("refused a connection from {}: it has {} open, the most one peer may have",
                                          peer.describe(), cap));
        const auto body = fmt::format("at most {} connections per user (or TCP address) at a time\n", cap);
        const auto reply = fmt::format(
            "HTTP/1.1 503 Service Unavailable\r\nServer: {}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
            shared_->options.name, body.size(), body);
        const auto sent = ::send(socket.native_handle(), reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)sent;
        beast::error_code ignored;
        socket.shutdown(Protocol::socket::shutdown_both, ignored);
        socket.close(ignored);
    }

    void open_session(typename Protocol::socket socket) {
        if (shared_->options.session_threads > 0) {
            // The accepted descriptor moves to a session thread's io_context.
            const std::lock_guard lock(shared_->session_threads_mutex);
            beast::error_code error;
            if (shared_->session_threads == nullptr) {
                socket.close(error);  // the server is being destroyed
                return;
            }
            const auto protocol = socket.local_endpoint(error).protocol();
            typename Protocol::socket moved(shared_->session_threads->next());
            if (!error) moved.assign(protocol, socket.release(error), error);
            if (error) {
                shared_->log(LogLevel::Warn, fmt::format("could not hand a new connection to a session thread: {}",
                                                         error.message()));
                return;
            }
            start_session(std::move(moved));
            return;
        }
        start_session(std::move(socket));
    }

    void start_session(typename Protocol::socket socket) {
        Peer peer;
        peer.connection_id = shared_->next_connection_id.fetch_add(1);
        if constexpr (std::is_same_v<Protocol, unix_socket>) {
            peer.address = "unix";
            fill_peer_credentials(socket.native_handle(), peer);
        } else {
            beast::error_code ignored;
            const auto remote = socket.remote_endpoint(ignored);
            peer.address = fmt::format("{}:{}", remote.address().to_string(), remote.port());
            socket.set_option(tcp::no_delay(true), ignored);
        }
        auto key = peer_key(peer);
        if (!shared_->connections.try_add(key, shared_->options.limits.max_connections_per_peer)) {
            refuse(socket, peer);
            return;
        }
        std::make_shared<Session<Protocol>>(std::move(socket), std::move(peer), std::move(key), shared_)->start();
    }

    asio::io_context& io_;
    typename Protocol::acceptor acceptor_;
    asio::steady_timer retry_timer_;
    std::shared_ptr<Server::Shared> shared_;
};

}  // namespace

class Server::Listeners {
  public:
    std::vector<std::shared_ptr<Listener<tcp>>> tcp_listeners;
    std::vector<std::shared_ptr<Listener<unix_socket>>> unix_listeners;
};

Server::Server(asio::io_context& io, Handler handler, ServerOptions options)
    : io_(io), shared_(std::make_shared<Shared>()), listeners_(std::make_unique<Listeners>()) {
    shared_->handler = std::move(handler);
    if (!options.log) {
        options.log = [](LogLevel level, const std::string& message) {
            if (level <= LogLevel::Warn) std::cerr << message << '\n';
        };
    }
    shared_->options = std::move(options);
    if (shared_->options.session_threads > 0) {
        session_threads_ = std::make_unique<SessionThreads>(shared_->options.session_threads);
        shared_->session_threads = session_threads_.get();
    }
}

std::size_t Server::open_sessions() const { return shared_->open_sessions.load(); }

std::size_t Server::queued_events() const { return shared_->queued_events.load(); }

Server::~Server() {
    stop();
    {
        const std::lock_guard lock(shared_->session_threads_mutex);
        shared_->session_threads = nullptr;
    }
    session_threads_.reset();
}

Result<unsigned short> Server::listen_tcp(const std::string& address) {
    const auto colon = address.rfind(':');
    if (colon == std::string::npos) {
        return Error{ErrorCode::InvalidConfig, fmt::format("TCP address '{}' has no port", address),
                     "give it as IP:PORT, for example 127.0.0.1:4938"};
    }
    std::string host = address.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    beast::error_code error;
    const auto ip = asio::ip::make_address(host, error);
    unsigned port = 0;
    const auto port_text = address.substr(colon + 1);
    const bool port_ok = !port_text.empty() && port_text.find_first_not_of("0123456789") == std::string::npos &&
                         port_text.size() <= 5 && (port = static_cast<unsigned>(std::stoul(port_text))) <= 65535;
    if (error || !port_ok) {
        return Error{ErrorCode::InvalidConfig, fmt::format("'{}' is not a valid IP address and port", address),
                     "give it as IP:PORT, for example 127.0.0.1:4938 or [::1]:4938"};
    }
    tcp::acceptor acceptor(asio::make_strand(io_));
    const tcp::endpoint endpoint(ip, static_cast<unsigned short>(port));
    acceptor.open(endpoint.protocol(), error);
    if (!error) acceptor.set_option(asio::socket_base::reuse_address(true), error);
    if (!error) acceptor.bind(endpoint, error);
    if (!error) acceptor.listen(asio::socket_base::max_listen_connections, error);
    if (error) {
        return Error{ErrorCode::OperatingSystem, fmt::format("cannot listen on {}: {}", address, error.message()),
                     tcp_listen_fix(error), error.value()};
    }
    const unsigned short bound_port = acceptor.local_endpoint().port();
    auto listener = std::make_shared<Listener<tcp>>(io_, std::move(acceptor), shared_);
    listener->start();
    listeners_->tcp_listeners.push_back(listener);
    return bound_port;
}

Status Server::listen_unix(const std::string& path) {
    beast::error_code error;
    unix_socket::acceptor acceptor(asio::make_strand(io_));
    const unix_socket::endpoint endpoint(path);
    acceptor.open(endpoint.protocol(), error);
    if (!error) acceptor.bind(endpoint, error);
    if (!error) acceptor.listen(asio::socket_base::max_listen_connections, error);
    if (error) {
        return Error{ErrorCode::OperatingSystem, fmt::format("cannot listen on {}: {}", path, error.message()),
                     "check that the directory is writable and the path is not in use"};
    }
    auto listener =
        std::make_shared<Listener<unix_socket>>(io_, std::move(acceptor), shared_);
    listener->start();
    listeners_->unix_listeners.push_back(listener);
    return {};
}

void Server::stop() {
    for (auto& listener : listeners_->tcp_listeners) listener->stop();
    for (auto& listener : listeners_->unix_listeners) listener->stop();
    listeners_->tcp_listeners.clear();
    listeners_->unix_listeners.clear();
    if (session_threads_) session_threads_->stop();
}

}  // namespace zeus::http_server
