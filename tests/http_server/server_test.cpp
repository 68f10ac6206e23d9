// The HTTP server component with a test handler: the limits that keep one
// client from costing the server more than its share, and the corners of
// HTTP/1.1 a server must answer (Expect: 100-continue, transfer codings).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "http_server/server.hpp"

namespace zeus::http_server {
namespace {

using namespace std::chrono_literals;

// Sends a 200-byte event every 20 us from its own thread while subscribed:
// a reader that does not read falls behind within milliseconds.
class SteadySource : public EventSource {
  public:
    class Feed : public EventSubscription {
      public:
        explicit Feed(EventSink sink)
            : thread_([this, sink = std::move(sink)] {
                  while (!stop_) {
                      sink(std::string(200, 'x'));
                      std::this_thread::sleep_for(20us);
                  }
              }) {}
        ~Feed() override {
            stop_ = true;
            thread_.join();
        }

      private:
        std::atomic<bool> stop_{false};
        std::thread thread_;
    };
    std::unique_ptr<EventSubscription> subscribe(EventSink sink) override {
        return std::make_unique<Feed>(std::move(sink));
    }
};

class HttpServerTest : public ::testing::Test {
  protected:
    void start(ServerLimits limits = {}, unsigned session_threads = 0) {
        socket_path_ = std::filesystem::temp_directory_path() /
                       ("zeus-http-" + std::to_string(::getpid()) + "-" +
                        ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".sock");
        std::filesystem::remove(socket_path_);
        ServerOptions options;
        options.name = "test-server";
        options.limits = limits;
        options.session_threads = session_threads;
        options.log = [this](LogLevel, const std::string& message) {
            const std::lock_guard lock(log_mutex_);
            log_ += message + "\n";
        };
        server_ = std::make_unique<Server>(
            io_,
            [this](const Request& request, const Peer&, Respond respond) {
                {
                    const std::lock_guard lock(log_mutex_);
                    handler_threads_.insert(std::this_thread::get_id());
                }
                if (request.target() == "/later") {  // answered by the test, from its thread
                    const std::lock_guard lock(log_mutex_);
                    later_.push_back(std::move(respond));
                    return;
                }
                if (request.target() == "/throw") throw std::runtime_error("a handler bug");
                if (request.target().starts_with("/seen")) {  // the target as the routes see it
                    respond(Response::text(http::status::ok, "saw '" + std::string(request.target()) + "'"));
                    return;
                }
                if (request.target() == "/stream") {
                    respond(Response::event_stream(std::make_shared<SteadySource>()));
                    return;
                }
                respond(Response::text(http::status::ok, "got '" + request.body() + "'"));
            },
            options);
        ASSERT_TRUE(server_->listen_unix(socket_path_.string()).ok());
        for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
    }

    void TearDown() override {
        for (const int fd : open_) ::close(fd);
        if (server_) server_->stop();
        work_.reset();
        io_.stop();
        for (auto& thread : threads_) thread.join();
        server_.reset();
        std::filesystem::remove(socket_path_);
    }

    int connect_client() {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, socket_path_.c_str(), sizeof address.sun_path - 1);
        if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
            ::close(fd);
            return -1;
        }
        open_.push_back(fd);
        return fd;
    }

    static void send_all(int fd, const std::string& bytes) {
        ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
    }

    // What arrives until `done` holds for it, the peer closes, or 3 s pass.
    template <class Done>
    static std::string receive(int fd, Done done) {
        std::string received;
        const auto deadline = std::chrono::steady_clock::now() + 3s;
        while (std::chrono::steady_clock::now() < deadline && !done(received)) {
            pollfd descriptor{fd, POLLIN, 0};
            if (::poll(&descriptor, 1, 20) <= 0) continue;
            char buffer[4096];
            const auto n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0) break;
            received.append(buffer, static_cast<std::size_t>(n));
        }
        return received;
    }
    static std::string receive_all(int fd) {
        return receive(fd, [](const std::string&) { return false; });
    }
    static bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

    std::string log() {
        const std::lock_guard lock(log_mutex_);
        return log_;
    }

    boost::asio::io_context io_;
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{
        io_.get_executor()};
    std::vector<std::thread> threads_;
    std::unique_ptr<Server> server_;
    std::filesystem::path socket_path_;
    std::vector<int> open_;
    std::mutex log_mutex_;
    std::string log_;
    std::set<std::thread::id> handler_threads_;
    std::vector<Respond> later_;
};

// ServerOptions::session_threads: the server's own threads serve the
// connections (never the threads that run `io`), keep-alive and all, and
// stopping it stops serving even with connections still open.
TEST_F(HttpServerTest, SessionThreadsServeKeepAliveConnectionsAndStopCleanly) {
    start({}, 2);
    std::vector<int> clients;
    for (int i = 0; i < 4; ++i) clients.push_back(connect_client());
    for (int round = 0; round < 3; ++round) {
        for (const int fd : clients) {
            send_all(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n" + std::to_string(round));
            const auto reply = receive(fd, [&](const std::string& r) { return has(r, "got '" + std::to_string(round)); });
            EXPECT_TRUE(has(reply, "HTTP/1.1 200 OK")) << reply;
            EXPECT_TRUE(has(reply, "got '" + std::to_string(round) + "'")) << reply;
        }
    }
    {
        const std::lock_guard lock(log_mutex_);
        EXPECT_GE(handler_threads_.size(), 1U);
        EXPECT_LE(handler_threads_.size(), 2U);
        for (const auto& thread : threads_) EXPECT_FALSE(handler_threads_.contains(thread.get_id()));
    }
    server_->stop();
    // Stopped: a request on a connection that is still open gets no answer.
    send_all(clients[0], "GET /late HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_FALSE(has(receive(clients[0], [](const std::string& r) { return has(r, "got"); }), "got"));
    server_.reset();  // closes the open connections
    EXPECT_EQ(receive_all(clients[1]), "");
}

TEST_F(HttpServerTest, AnsweredByTheHandlerWithTheServersName) {
    start();
    const int fd = connect_client();
    send_all(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc");
    const auto reply = receive_all(fd);
    EXPECT_TRUE(has(reply, "HTTP/1.1 200 OK")) << reply;
    EXPECT_TRUE(has(reply, "Server: test-server")) << reply;
    EXPECT_TRUE(has(reply, "got 'abc'")) << reply;
}

TEST_F(HttpServerTest, AnAnswerGivenLaterThanTheRequestTimeoutStillArrives) {
    ServerLimits limits;
    limits.request_timeout = 300ms;  // also the write's: room for 4 MiB on a loaded machine
    start(limits);
    const int fd = connect_client();
    send_all(fd, "GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
    const auto waiting_since = std::chrono::steady_clock::now();
    for (;;) {
        {
            const std::lock_guard lock(log_mutex_);
            if (!later_.empty()) break;
        }
        ASSERT_LT(std::chrono::steady_clock::now() - waiting_since, 3s) << "the handler never ran";
        std::this_thread::sleep_for(5ms);
    }
    std::this_thread::sleep_for(limits.request_timeout * 3);  // well past the request's timeout
    {
        const std::lock_guard lock(log_mutex_);
        // Larger than a socket buffer, so the write cannot finish at once.
        later_.front()(Response::text(http::status::ok, std::string(4 << 20, 'x') + "late but here"));
    }
    // The body ends the reply; checking only the end keeps the 4 MiB read linear.
    const auto reply = receive(fd, [](const std::string& text) { return text.ends_with("late but here"); });
    EXPECT_TRUE(has(reply, "HTTP/1.1 200 OK")) << reply.substr(0, 200);
    EXPECT_TRUE(has(reply, "late but here")) << "got " << reply.size() << " bytes";
    // Whole and on a connection that still serves: the write had its own time.
    send_all(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc");
    const auto next = receive_all(fd);
    EXPECT_TRUE(has(next, "got 'abc'")) << next;
}

TEST_F(HttpServerTest, ConnectionsOverThePerPeerCapAreRefusedUntilOneCloses) {
    ServerLimits limits;
    limits.max_connections_per_peer = 3;
    start(limits);
    std::vector<int> held;
    for (int i = 0; i < 3; ++i) held.push_back(connect_client());
    // The three are sessions before the fourth arrives.
    for (const int fd : held) {
        send_all(fd, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
        EXPECT_TRUE(has(receive(fd, [](const std::string& r) { return has(r, "got"); }), "200 OK"));
    }
    const int refused = connect_client();
    const auto reply = receive_all(refused);
    EXPECT_TRUE(has(reply, "503 Service Unavailable")) << reply;
    EXPECT_TRUE(has(reply, "at most 3 connections")) << reply;
    EXPECT_TRUE(has(log(), "refused a connection")) << log();

    ::shutdown(held[0], SHUT_RDWR);
    bool served = false;
    for (int attempt = 0; attempt < 100 && !served; ++attempt) {
        const int fd = connect_client();
        send_all(fd, "GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        served = has(receive_all(fd), "200 OK");
        if (!served) std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(served);
}

TEST_F(HttpServerTest, AReaderThatNeverReadsHoldsABoundedQueue) {
    start();  // the default limits
    const int fd = connect_client();
    send_all(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    // Once the socket buffers are full, events pile up in the server.
    std::size_t peak = 0;
    const auto deadline = std::chrono::steady_clock::now() + 500ms;
    while (std::chrono::steady_clock::now() < deadline) {
        peak = std::max(peak, server_->queued_events());
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_GT(peak, 0U);
    EXPECT_LE(peak, ServerLimits{}.max_queued_events);
    EXPECT_LE(ServerLimits{}.max_queued_events * 200, 16U * 1024) << "a never-reading client may cost at most 16 KiB";
}

TEST_F(HttpServerTest, EventStreamsPerPeerAreCapped) {
    ServerLimits limits;
    limits.max_event_streams_per_peer = 2;
    start(limits);
    for (int i = 0; i < 2; ++i) {
        const int fd = connect_client();
        send_all(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
        EXPECT_TRUE(has(receive(fd, [](const std::string& r) { return has(r, "data: "); }), "text/event-stream"));
    }
    const int third = connect_client();
    send_all(third, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    const auto reply = receive_all(third);
    EXPECT_TRUE(has(reply, "503 Service Unavailable")) << reply;
    EXPECT_TRUE(has(reply, "at most 2 event streams")) << reply;
}

// RFC 9112 3.2.2: a server must accept a target in absolute form; the
// routes see its path and query.
TEST_F(HttpServerTest, AbsoluteFormTargetsAreServedAsTheirPathAndQuery) {
    start();
    for (const auto& [target, seen] : std::vector<std::pair<std::string, std::string>>{
             {"http://127.0.0.1:9466/seen?x=1", "/seen?x=1"},
             {"HTTP://localhost/seen", "/seen"},
             {"https://[::1]:8000/seen/a/b", "/seen/a/b"},
             {"http://localhost?x", "/?x"},
         }) {
        const int fd = connect_client();
        send_all(fd, "GET " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        const auto reply = receive_all(fd);
        EXPECT_TRUE(has(reply, "HTTP/1.1 200 OK")) << target << "\n" << reply;
        if (seen != "/?x") {
            EXPECT_TRUE(has(reply, "saw '" + seen + "'")) << target << "\n" << reply;
        }
    }
}

// RFC 9112 3.2: an HTTP/1.1 request without Host, or any request with two,
// is a 400; HTTP/1.0 may leave it out.
TEST_F(HttpServerTest, HostIsRequiredExactlyOnceInHttp11) {
    start();
    const auto exchange = [this](const std::string& head) {
        const int fd = connect_client();
        send_all(fd, head + "Connection: close\r\n\r\n");
        return receive_all(fd);
    };
    const auto none = exchange("GET /seen HTTP/1.1\r\n");
    EXPECT_TRUE(has(none, "HTTP/1.1 400 Bad Request")) << none;
    EXPECT_TRUE(has(none, "needs a Host header")) << none;
    const auto two = exchange("GET /seen HTTP/1.1\r\nHost: a\r\nHost: b\r\n");
    EXPECT_TRUE(has(two, "HTTP/1.1 400 Bad Request")) << two;
    EXPECT_TRUE(has(two, "2 Host headers")) << two;
    const auto two_in_1_0 = exchange("GET /seen HTTP/1.0\r\nHost: a\r\nHost: b\r\n");
    EXPECT_TRUE(has(two_in_1_0, " 400 Bad Request")) << two_in_1_0;
    const auto empty = exchange("GET /seen HTTP/1.1\r\nHost:\r\n");
    EXPECT_TRUE(has(empty, "HTTP/1.1 200 OK")) << empty;
    const auto old = exchange("GET /seen HTTP/1.0\r\n");
    EXPECT_TRUE(has(old, "HTTP/1.0 200 OK")) << old;
    EXPECT_TRUE(has(old, "saw '/seen'")) << old;
}

// RFC 9112 2.3: a later HTTP/1 minor version is served as HTTP/1.1 (keep-alive
// included); another major version is a 505.
TEST_F(HttpServerTest, LaterMinorVersionsAreServedAsHttp11) {
    start();
    const int fd = connect_client();
    send_all(fd, "GET /seen/1 HTTP/1.2\r\nHost: x\r\n\r\nGET /seen/2 HTTP/1.9\r\nHost: x\r\nConnection: close\r\n\r\n");
    const auto replies = receive_all(fd);
    EXPECT_EQ(replies.rfind("HTTP/1.1 200 OK", 0), 0U) << replies;
    EXPECT_TRUE(has(replies, "saw '/seen/1'")) << replies;
    EXPECT_TRUE(has(replies, "saw '/seen/2'")) << replies;
    for (const std::string version : {"HTTP/2.0", "HTTP/3.0", "HTTP/0.9"}) {
        const int other = connect_client();
        send_all(other, "GET /seen " + version + "\r\nHost: x\r\n\r\n");
        const auto reply = receive_all(other);
        EXPECT_EQ(reply.rfind("HTTP/1.1 505 HTTP Version Not Supported", 0), 0U) << version << "\n" << reply;
    }
    const int malformed = connect_client();
    send_all(malformed, "GET /seen HTTP/1.x\r\nHost: x\r\n\r\n");
    EXPECT_TRUE(has(receive_all(malformed), " 400 Bad Request"));
}

TEST_F(HttpServerTest, ExpectContinueIsAnsweredBeforeTheBody) {
    start();
    const int fd = connect_client();
    send_all(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: "
                 "close\r\n\r\n");
    const auto interim = receive(fd, [](const std::string& r) { return has(r, "\r\n\r\n"); });
    EXPECT_TRUE(has(interim, "HTTP/1.1 100 Continue\r\n")) << interim;
    send_all(fd, "hello");
    const auto reply = receive_all(fd);
    EXPECT_TRUE(has(reply, "200 OK")) << reply;
    EXPECT_TRUE(has(reply, "got 'hello'")) << reply;
}

TEST_F(HttpServerTest, BodiesInCodingsWeCannotDecodeAreRefused) {
    start();
    const int gzip = connect_client();
    send_all(gzip, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nxxxx");
    const auto bad = receive_all(gzip);
    EXPECT_TRUE(has(bad, "HTTP/1.1 400 Bad Request")) << bad;

    const int gzip_chunked = connect_client();
    send_all(gzip_chunked, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
    const auto unsupported = receive_all(gzip_chunked);
    EXPECT_TRUE(has(unsupported, "HTTP/1.1 501 Not Implemented")) << unsupported;

    const int chunked = connect_client();
    send_all(chunked, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: "
                      "close\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
    const auto fine = receive_all(chunked);
    EXPECT_TRUE(has(fine, "got 'abc'")) << fine;
}

// A handler slower than the request timeout once must not leave its
// keep-alive connection without one: after the late answer, an idle
// connection is dropped again after request_timeout.
TEST_F(HttpServerTest, TheRequestTimeoutIsRearmedAfterALateAnswer) {
    ServerLimits limits;
    limits.request_timeout = 300ms;
    start(limits);
    const int fd = connect_client();
    send_all(fd, "GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
    for (const auto since = std::chrono::steady_clock::now();;) {
        {
            const std::lock_guard lock(log_mutex_);
            if (!later_.empty()) break;
        }
        ASSERT_LT(std::chrono::steady_clock::now() - since, 3s) << "the handler never ran";
        std::this_thread::sleep_for(5ms);
    }
    std::this_thread::sleep_for(limits.request_timeout * 3);
    {
        const std::lock_guard lock(log_mutex_);
        later_.front()(Response::text(http::status::ok, "late"));
    }
    EXPECT_TRUE(has(receive(fd, [](const std::string& r) { return has(r, "late"); }), "late"));
    // Idle now: closed by the server (recv gives 0) within a few timeouts.
    const auto idle_since = std::chrono::steady_clock::now();
    EXPECT_EQ(receive_all(fd), "");
    EXPECT_LT(std::chrono::steady_clock::now() - idle_since, 2s) << "the idle connection was never dropped";
}

// HEAD is answered as GET is, with the header (Content-Length included) and no body.
TEST_F(HttpServerTest, HeadIsAnsweredLikeGetWithoutABody) {
    start();
    const int fd = connect_client();
    send_all(fd, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
    const auto get = receive(fd, [](const std::string& r) { return has(r, "got ''"); });
    send_all(fd, "HEAD /x HTTP/1.1\r\nHost: x\r\n\r\n");
    const auto head = receive(fd, [](const std::string& r) { return has(r, "\r\n\r\n"); });
    EXPECT_TRUE(has(head, "HTTP/1.1 200 OK")) << head;
    const auto length = get.substr(get.find("Content-Length:"), get.find("\r\n", get.find("Content-Length:")) -
                                                                   get.find("Content-Length:"));
    EXPECT_TRUE(has(head, length)) << head << " vs " << length;
    EXPECT_TRUE(head.ends_with("\r\n\r\n")) << head;
    // The connection goes on, and no body bytes were left in it.
    send_all(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    const auto next = receive_all(fd);
    EXPECT_TRUE(next.starts_with("HTTP/1.1 200 OK")) << next;
    EXPECT_TRUE(has(next, "got 'ok'")) << next;
}

// Bodies being read count against one budget for the whole server: clients
// that each stay under body_limit cannot together hold N x body_limit.
TEST_F(HttpServerTest, RequestBodiesShareOneBudgetForTheServer) {
    ServerLimits limits;
    limits.body_limit = 1024 * 1024;
    limits.total_body_limit = 2 * 1024 * 1024;
    start(limits);
    const std::string header = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n";
    const int first = connect_client();
    const int second = connect_client();
    send_all(first, header + "a");
    send_all(second, header + "b");
    std::this_thread::sleep_for(100ms);  // both headers read; their bodies pending
    const int third = connect_client();
    send_all(third, header);
    const auto refused = receive_all(third);
    EXPECT_TRUE(has(refused, "503 Service Unavailable")) << refused;
    EXPECT_TRUE(has(refused, "Retry-After: 1")) << refused;
    EXPECT_TRUE(has(log(), "refused a 1048576-byte request body")) << log();
    // One body done and answered: its share is free for the next.
    send_all(first, std::string(1048575, 'a'));
    EXPECT_TRUE(has(receive(first, [](const std::string& r) { return has(r, "got 'a"); }), "200 OK"));
    const int fourth = connect_client();
    send_all(fourth, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\nConnection: close\r\n\r\n" +
                         std::string(1048576, 'c'));
    const auto served = receive(fourth, [](const std::string& r) { return r.ends_with("'"); });
    EXPECT_TRUE(has(served, "200 OK")) << served.substr(0, 200);
}

// A request that keeps failing in the handler is logged once per interval, not once per request.
TEST_F(HttpServerTest, RepeatedHandlerFailuresAreLoggedAtARate) {
    start();
    const int fd = connect_client();
    for (int i = 0; i < 20; ++i) {
        send_all(fd, "GET /throw HTTP/1.1\r\nHost: x\r\n\r\n");
        const auto reply = receive(fd, [](const std::string& r) { return has(r, "server log\"}"); });
        EXPECT_TRUE(has(reply, "500 Internal Server Error")) << reply;
    }
    const auto text = log();
    std::size_t lines = 0;
    for (std::size_t at = text.find("a handler bug"); at != std::string::npos; at = text.find("a handler bug", at + 1))
        ++lines;
    EXPECT_EQ(lines, 1U) << text;
}

}  // namespace
}  // namespace zeus::http_server
