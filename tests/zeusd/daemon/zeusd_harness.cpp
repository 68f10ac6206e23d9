#include "zeusd_harness.hpp"

#include "support/listening_line.hpp"
#include "support/build_paths.hpp"

#include <sys/resource.h>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace zeus::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

template <class Socket>
HttpReply exchange(Socket& socket, const std::string& method, const std::string& target,
                   const std::map<std::string, std::string>& headers) {
    http::request<http::empty_body> request(http::string_to_verb(method), target, 11);
    request.set(http::field::host, "localhost");
    request.set(http::field::connection, "close");
    for (const auto& [name, value] : headers) request.set(name, value);
    http::write(socket, request);
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    beast::error_code error;
    http::read(socket, buffer, response, error);
    if (error && error != http::error::end_of_stream) throw std::runtime_error("HTTP read failed: " + error.message());
    HttpReply reply;
    reply.status = static_cast<int>(response.result_int());
    for (const auto& field : response) {
        std::string name(field.name_string());
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        reply.headers[name] = std::string(field.value());
    }
    reply.body = response.body();
    return reply;
}

std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

int connect_to(const Endpoint& endpoint) {
    if (endpoint.unix_path) {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, endpoint.unix_path->c_str(), sizeof address.sun_path - 1);
        if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
            ::close(fd);
            return -1;
        }
        return fd;
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(endpoint.tcp_port);
    ::inet_pton(AF_INET, endpoint.tcp_host.value_or("127.0.0.1").c_str(), &address.sin_addr);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

HttpReply http_request(const Endpoint& endpoint, const std::string& method, const std::string& target,
                       const std::map<std::string, std::string>& headers) {
    asio::io_context io;
    if (endpoint.unix_path) {
        asio::local::stream_protocol::socket socket(io);
        socket.connect(asio::local::stream_protocol::endpoint(*endpoint.unix_path));
        return exchange(socket, method, target, headers);
    }
    asio::ip::tcp::socket socket(io);
    socket.connect(asio::ip::tcp::endpoint(asio::ip::make_address(endpoint.tcp_host.value_or("127.0.0.1")),
                                           endpoint.tcp_port));
    return exchange(socket, method, target, headers);
}

std::string raw_exchange(const Endpoint& endpoint, const std::string& bytes, std::chrono::milliseconds timeout) {
    const int fd = connect_to(endpoint);
    if (fd < 0) throw std::runtime_error("cannot connect to zeusd");
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        const auto n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;  // the server may close early on oversized input
        sent += static_cast<std::size_t>(n);
    }
    std::string received = receive_until(fd, "", timeout);
    ::close(fd);
    return received;
}

std::string receive_until(int fd, const std::string& part, std::chrono::milliseconds timeout) {
    std::string received;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline &&
           (part.empty() || received.find(part) == std::string::npos)) {
        pollfd descriptor{fd, POLLIN, 0};
        if (::poll(&descriptor, 1, 50) <= 0) continue;
        char buffer[4096];
        const auto n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        received.append(buffer, static_cast<std::size_t>(n));
    }
    return received;
}

namespace {

volatile sig_atomic_t namespace_init = 0;

void pass_signal_on(int signal) {
    if (namespace_init > 0) ::kill(namespace_init, signal);
}

}  // namespace

// In the forked child: returns in PID 1 of a new PID namespace (which then
// execs zeusd); this process stays outside, passes SIGTERM and SIGINT on and
// exits as that process does.
void run_in_new_pid_namespace() {
    if (::unshare(CLONE_NEWPID) != 0) ::_exit(125);
    const pid_t init = ::fork();
    if (init < 0) ::_exit(125);
    if (init == 0) return;
    namespace_init = init;
    struct sigaction action {};
    action.sa_handler = pass_signal_on;
    ::sigaction(SIGTERM, &action, nullptr);
    ::sigaction(SIGINT, &action, nullptr);
    int status = 0;
    while (::waitpid(init, &status, 0) < 0 && errno == EINTR) {
    }
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

ZeusdProcess::ZeusdProcess(std::vector<std::string> args, std::map<std::string, std::string> env,
                           const std::filesystem::path& log_file, std::optional<Endpoint> wait_for,
                           std::optional<unsigned long> fd_limit, bool own_pid_namespace)
    : log_file_(log_file), endpoint_(wait_for) {
    args.insert(args.begin(), {zeus::testing::zeusd_path(), "serve"});
    pid_ = ::fork();
    if (pid_ == 0) {
        const int out = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(out, 1);
        ::dup2(out, 2);
        for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
        if (fd_limit) {
            const rlimit limit{*fd_limit, *fd_limit};
            if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::_exit(126);
        }
        if (own_pid_namespace) run_in_new_pid_namespace();
        std::vector<char*> argv;
        for (auto& arg : args) argv.push_back(arg.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    if (!wait_for) return;
    if (!wait_for->unix_path && wait_for->tcp_port == 0) {
        try {
            endpoint_->tcp_port = wait_for_listening(log_file, pid_).port;
        } catch (const std::runtime_error&) {
            stop();
            throw;
        }
        return;
    }
    const bool up = eventually(
        [&] {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return true;
            }
            const int fd = connect_to(*wait_for);
            if (fd < 0) return false;
            // Hang up and wait for zeusd to close its end: until then the
            // probe still counts against this process's connection cap
            // (--max-connections-per-peer), and a test's first connections
            // could be refused in its place. zeusd frees the slot before it
            // closes, so the end of the stream means the slot is free.
            ::shutdown(fd, SHUT_WR);
            receive_until(fd, "", std::chrono::milliseconds(10000));
            ::close(fd);
            return true;
        },
        std::chrono::milliseconds(10000));
    if (!up || pid_ < 0) throw std::runtime_error("zeusd did not start:\n" + log());
}

ZeusdProcess::~ZeusdProcess() { stop(); }

int ZeusdProcess::stop() {
    if (pid_ <= 0) return 0;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

void ZeusdProcess::kill9() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
}

std::string ZeusdProcess::log() const { return slurp(log_file_); }

std::pair<int, std::string> run_zeusd(const std::vector<std::string>& args,
                                      const std::map<std::string, std::string>& env,
                                      std::chrono::milliseconds timeout) {
    const auto output = std::filesystem::temp_directory_path() / ("zeusd-run-" + std::to_string(::getpid()) + ".log");
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int out = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(out, 1);
        ::dup2(out, 2);
        for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
        std::vector<std::string> full = args;
        full.insert(full.begin(), zeus::testing::zeusd_path());
        std::vector<char*> argv;
        for (auto& arg : full) argv.push_back(arg.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    // A zeusd that serves when it should have refused would run forever: it
    // is killed after `timeout`, and the status says so (-SIGKILL).
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            break;
        }
        ::usleep(10000);
    }
    auto text = slurp(output);
    std::filesystem::remove(output);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status), text};
}

SimBurn::SimBurn(unsigned gpu, pid_t pid) {
    const std::string gpu_text = std::to_string(gpu);
    const std::string pid_text = std::to_string(pid);
    burner_ = ::fork();
    if (burner_ == 0) {
        const std::string& cli = zeus_sim_cli_path();
        ::execl(cli.c_str(), cli.c_str(), "burn", "--gpu", gpu_text.c_str(), "--util", "0.5", "--seconds", "3600",
                "--pid", pid_text.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    if (burner_ < 0) throw std::runtime_error("fork failed");
}

SimBurn::~SimBurn() { end(); }

void SimBurn::end() {
    if (burner_ <= 0) return;
    ::kill(burner_, SIGTERM);
    ::waitpid(burner_, nullptr, 0);
    burner_ = -1;
}

}  // namespace zeus::testing
