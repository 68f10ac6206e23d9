// Sockets and the HTTP layer: the Unix socket's life cycle, TCP, keep-alive,
// and what the server does with oversized, malformed and slow requests.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "zeusd_fixture.hpp"

namespace zeus::testing {
namespace {

using nlohmann::json;

TEST_F(ZeusdTest, TheSocketGetsTheRequestedModeAndIsRemovedOnExit) {
    start({"--socket-permissions", "660"});
    struct stat info {};
    ASSERT_EQ(::stat(endpoint_.unix_path->c_str(), &info), 0);
    EXPECT_TRUE(S_ISSOCK(info.st_mode));
    EXPECT_EQ(info.st_mode & 0777, 0660U);
    EXPECT_EQ(daemon_->stop(), 0);
    EXPECT_FALSE(std::filesystem::exists(*endpoint_.unix_path));
}

TEST_F(ZeusdTest, TheSocketGetsTheRequestedOwner) {
    if (::geteuid() != 0) GTEST_SKIP() << "changing a file's owner needs root";
    start({"--socket-uid", "4242", "--socket-gid", "4343"});
    struct stat info {};
    ASSERT_EQ(::stat(endpoint_.unix_path->c_str(), &info), 0);
    EXPECT_EQ(info.st_uid, 4242U);
    EXPECT_EQ(info.st_gid, 4343U);
}

TEST_F(ZeusdTest, AStaleSocketIsReplacedButALiveOneIsNot) {
    start();
    // A second daemon on the same path must refuse: the first one answers.
    const auto [status, output] =
        run_zeusd({"serve", "--socket-path", *endpoint_.unix_path}, daemon_env());
    EXPECT_EQ(status, 1);
    EXPECT_NE(output.find("another server (pid " + std::to_string(daemon_->pid()) + ") is listening on"),
              std::string::npos)
        << output;
    EXPECT_EQ(get("/time").status, 200);

    // kill -9 leaves the socket file behind; the next daemon removes it.
    ::kill(daemon_->pid(), SIGKILL);
    daemon_->stop();
    ASSERT_TRUE(std::filesystem::exists(*endpoint_.unix_path));
    start();
    EXPECT_NE(log().find("removed stale socket"), std::string::npos) << log();
    EXPECT_EQ(get("/time").status, 200);
}

TEST_F(ZeusdTest, APathThatIsNotASocketIsNeverTouched) {
    std::ofstream(*endpoint_.unix_path) << "precious";
    const auto [status, output] = run_zeusd({"serve", "--socket-path", *endpoint_.unix_path}, daemon_env());
    EXPECT_EQ(status, 1);
    EXPECT_NE(output.find("exists and is not a socket"), std::string::npos) << output;
    std::ifstream in(*endpoint_.unix_path);
    std::string content;
    in >> content;
    EXPECT_EQ(content, "precious");
}

TEST_F(ZeusdTest, MissingSocketDirectoriesAreCreated) {
    endpoint_.unix_path = (dir_ / "a" / "b" / "zeusd.sock").string();
    start();
    EXPECT_EQ(get("/time").status, 200);
}

TEST_F(ZeusdTest, BadFlagsAreRefusedWithTheFix) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"serve", "--enable", "gpu-read,gpu-write"}, "unknown API group 'gpu-write'"},
        {{"serve", "--socket-permissions", "999"}, "is not an octal mode"},
        {{"serve", "--mode", "named-pipe"}, "only on Windows"},
        {{"serve", "--mode", "tcp", "--tcp-bind-address", "localhost"}, "has no port"},
        {{"serve", "--mode", "tcp", "--tcp-bind-address", "300.1.1.1:80"}, "not a valid IP address and port"},
        {{"serve", "--socket-uid", "no-such-user-here"}, "no user named 'no-such-user-here'"},
        {{"serve", "--gpu-backend", "amdsmi", "--socket-path", "/tmp/x.sock"}, "--gpu-backend asked for amdsmi"},
        {{"serve", "--signing-key-path", "/nonexistent/key", "--socket-path", "/tmp/x.sock"}, "/nonexistent/key"},
        {{"serve", "--control-policy", "owners"}, "--control-policy: owners not in {any,owner}"},
        {{"serve", "--control-policy", "owner", "--proc", "/nonexistent/proc", "--socket-path",
          (dir_ / "x.sock").string()},
         "--proc: /nonexistent/proc is not a directory"},
        {{"serve", "--proc", "/host/proc", "--socket-path", (dir_ / "x.sock").string()},
         "--proc /host/proc: only --control-policy owner and --attribution read it, and neither is on"},
    };
    for (const auto& [args, expected] : cases) {
        const auto [status, output] = run_zeusd(args, daemon_env());
        EXPECT_NE(status, 0) << output;
        EXPECT_NE(output.find(expected), std::string::npos) << output;
    }
}

// Whether nothing listens on loopback `ip` port `port` now.
bool refused(const std::string& ip, unsigned short port) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    boost::system::error_code error;
    socket.connect({boost::asio::ip::make_address(ip), port}, error);
    return error == boost::asio::error::connection_refused;
}

bool has_ipv6_loopback() {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor(io);
    boost::system::error_code error;
    acceptor.open(boost::asio::ip::tcp::v6(), error);
    if (!error) acceptor.bind({boost::asio::ip::address_v6::loopback(), 0}, error);
    return !error;
}

// On TCP port 0 the kernel picks a free port and the log names it (the
// harness connects to the port it read there), so nobody hands zeusd a port
// that another process may take first. `host` is `ip` as zeusd writes it.
void expect_served_on_the_logged_port(const Endpoint& tcp, const std::string& host, const std::string& log,
                                      ZeusdProcess& daemon) {
    ASSERT_NE(tcp.tcp_port, 0);
    const std::string address = host + ":" + std::to_string(tcp.tcp_port);
    EXPECT_NE(log.find(" zeusd: listening on " + address + "\n"), std::string::npos) << log;
    EXPECT_NE(log.find("serving TCP without --signing-key-path: anyone who can reach " + address + " can use"),
              std::string::npos)
        << log;
    const auto reply = http_request(tcp, "GET", "/gpu/get_power_limit?gpu_ids=0");
    EXPECT_EQ(reply.status, 200) << reply.body;
    EXPECT_EQ(reply.headers.at("server"), "zeusd");
    // The port that answered was this zeusd's: it closes with it.
    EXPECT_EQ(daemon.stop(), 0);
    EXPECT_TRUE(refused(*tcp.tcp_host, tcp.tcp_port)) << address;
}

TEST_F(ZeusdTest, TcpServesTheSameApiOnThePortItLogs) {
    start_tcp("127.0.0.1");
    expect_served_on_the_logged_port(endpoint_, "127.0.0.1", log(), *daemon_);
}

TEST_F(ZeusdTest, TcpOverIpv6LogsItsAddressInBrackets) {
    if (!has_ipv6_loopback()) GTEST_SKIP() << "this machine has no IPv6 loopback";
    start_tcp("::1");
    expect_served_on_the_logged_port(endpoint_, "[::1]", log(), *daemon_);
}

TEST_F(ZeusdTest, KeepAliveConnectionsServeManyRequests) {
    start();
    std::string requests;
    for (int i = 0; i < 20; ++i) requests += "GET /time HTTP/1.1\r\nHost: x\r\n\r\n";
    requests += "GET /time HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    const auto reply = raw_exchange(endpoint_, requests);
    std::size_t count = 0;
    for (auto at = reply.find("HTTP/1.1 200 OK"); at != std::string::npos; at = reply.find("HTTP/1.1 200 OK", at + 1)) {
        ++count;
    }
    EXPECT_EQ(count, 21U) << reply;
}

TEST_F(ZeusdTest, OversizedHeadersAndBodiesAreRefused) {
    start();
    const auto big_header = raw_exchange(
        endpoint_, "GET /time HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(20000, 'a') + "\r\n\r\n");
    EXPECT_EQ(big_header.rfind("HTTP/1.1 431", 0), 0U) << big_header.substr(0, 200);
    EXPECT_NE(big_header.find("split a long gpu_ids list"), std::string::npos) << big_header;  // the fix
    const auto big_body = raw_exchange(endpoint_, "POST /gpu/reset_locked_clocks?gpu_ids=0&block=true HTTP/1.1\r\n"
                                                  "Host: x\r\nContent-Length: 10000000\r\n\r\n" +
                                                      std::string(100000, 'b'));
    EXPECT_EQ(big_body.rfind("HTTP/1.1 413", 0), 0U) << big_body.substr(0, 200);
    EXPECT_NE(big_body.find("send less per request"), std::string::npos) << big_body;
    const auto long_target = get("/gpu/get_power?gpu_ids=" + std::string(30000, '0'));
    EXPECT_EQ(long_target.status, 431);
    EXPECT_NE(long_target.body.find("split a long gpu_ids list"), std::string::npos) << long_target.body;
    EXPECT_EQ(get("/time").status, 200);  // still serving
}

TEST_F(ZeusdTest, MalformedRequestsGet400AndDoNotDisturbOthers) {
    start();
    for (const std::string& garbage :
         {std::string("HELLO\r\n\r\n"), std::string("GET /time HTTP/1.1\r\nContent-Length: -1\r\n\r\n"),
          std::string("\x00\x01\x02\r\n\r\n", 7)}) {
        const auto reply = raw_exchange(endpoint_, garbage);
        EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0U) << reply;
    }
    // A version this server does not speak (RFC 9110 15.6.6).
    const auto reply = raw_exchange(endpoint_, "GET / HTTP/9.9\r\n\r\n");
    EXPECT_EQ(reply.rfind("HTTP/1.1 505", 0), 0U) << reply;
    EXPECT_EQ(get("/time").status, 200);
}

TEST_F(ZeusdTest, ExpectContinueAndUnknownTransferCodingsAreAnswered) {
    start();
    // curl sends Expect: 100-continue with larger bodies and waits for the interim answer.
    const auto continued = raw_exchange(endpoint_,
                                        "POST /gpu/reset_locked_clocks?gpu_ids=0&block=true HTTP/1.1\r\nHost: x\r\n"
                                        "Content-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
                                        std::chrono::milliseconds(500));
    EXPECT_EQ(continued.rfind("HTTP/1.1 100 Continue\r\n", 0), 0U) << continued;
    const auto gzip = raw_exchange(endpoint_, "POST /gpu/reset_locked_clocks?gpu_ids=0&block=true HTTP/1.1\r\n"
                                              "Host: x\r\nTransfer-Encoding: gzip\r\n\r\nabc");
    EXPECT_EQ(gzip.rfind("HTTP/1.1 400", 0), 0U) << gzip;
    EXPECT_EQ(get("/time").status, 200);
}

// Threads of a running process, as the kernel lists them.
std::size_t thread_count(pid_t pid) {
    const auto tasks = std::filesystem::path("/proc") / std::to_string(pid) / "task";
    return static_cast<std::size_t>(
        std::distance(std::filesystem::directory_iterator(tasks), std::filesystem::directory_iterator{}));
}

// Two request threads per logical CPU by default: a thread the scheduler
// holds off its core for a tick (4 ms) stalls its share of the connections,
// and p99 was that tick with one per CPU, and 1.4-2.1 ms with one more
// (docs/benchmarks.md, zeusd load, 2026-11-26 and 2026-11-28).
TEST_F(ZeusdTest, ServesOnTwoRequestThreadsPerLogicalCpuByDefault) {
    start({"--num-workers", "1"});
    ASSERT_EQ(get("/time").status, 200);
    const std::size_t with_one = thread_count(daemon_->pid());
    daemon_.reset();
    start();
    ASSERT_EQ(get("/time").status, 200);
    const std::size_t by_default = thread_count(daemon_->pid());
    EXPECT_EQ(by_default - with_one, 2 * std::thread::hardware_concurrency() - 1) << log();
}

TEST_F(ZeusdTest, SlowClientsAreDroppedWhileOthersAreServed) {
    start({"--request-timeout-s", "0.5", "--num-workers", "1"});
    const int slow = connect_to(endpoint_);
    ASSERT_GE(slow, 0);
    const std::string partial = "GET /time HTTP/1.1\r\nHo";
    ASSERT_GT(::send(slow, partial.data(), partial.size(), MSG_NOSIGNAL), 0);
    // One worker thread, and yet the stalled request blocks nobody.
    for (int i = 0; i < 5; ++i) EXPECT_EQ(get("/time").status, 200);
    const auto started = std::chrono::steady_clock::now();
    char byte = 0;
    const auto n = ::recv(slow, &byte, 1, 0);  // blocks until the server closes
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_EQ(n, 0);
    EXPECT_LT(waited, 3.0);
    ::close(slow);
}

// A handler slower than the request timeout (an override that sleeps)
// must not leave its keep-alive connection without one afterwards.
TEST_F(ZeusdTest, TheRequestTimeoutHoldsAgainAfterASlowOverride) {
    const auto script = dir_ / "slow.sh";
    std::ofstream(script) << "#!/bin/sh\nsleep 1.5\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    const auto toml = dir_ / "overrides.toml";
    std::ofstream(toml) << "[set_power_limit]\ncommands = [\"" << script.string() << "\"]\n";
    std::filesystem::permissions(toml, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    start({"--gpu-command-overrides", toml.string(), "--request-timeout-s", "0.5"});
    const int fd = connect_to(endpoint_);
    ASSERT_GE(fd, 0);
    const std::string request =
        "POST /gpu/set_power_limit?gpu_ids=0&power_limit_mw=250000&block=true&persist=true HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_GT(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), 0);
    std::string reply;
    char buffer[4096];
    while (reply.find("\r\n\r\n") == std::string::npos) {
        const auto n = ::recv(fd, buffer, sizeof buffer, 0);
        ASSERT_GT(n, 0) << reply << log();
        reply.append(buffer, static_cast<std::size_t>(n));
    }
    EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0U) << reply;
    // Idle from here: dropped after about the timeout, not kept open for good.
    timeval limit{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    const auto idle_since = std::chrono::steady_clock::now();
    ssize_t n = 0;
    while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) {
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - idle_since).count();
    EXPECT_EQ(n, 0) << "the idle connection was still open after 5 s";
    EXPECT_LT(waited, 3.0);
    ::close(fd);
}

// HEAD on a GET route: GET's status and headers, no body (it was a 405).
TEST_F(ZeusdTest, HeadIsAnsweredLikeGetWithoutABody) {
    start();
    const auto get_reply = raw_exchange(endpoint_, "GET /time HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const auto head = raw_exchange(endpoint_, "HEAD /time HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0U) << head;
    EXPECT_TRUE(head.ends_with("\r\n\r\n")) << head;
    EXPECT_NE(head.find("Content-Length:"), std::string::npos) << head;
    EXPECT_EQ(get_reply.rfind("HTTP/1.1 200", 0), 0U) << get_reply;
    EXPECT_GT(get_reply.size(), head.size());
}

}  // namespace
}  // namespace zeus::testing
