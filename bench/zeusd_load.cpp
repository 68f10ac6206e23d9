// Load benchmark of zeusd: starts a real `zeusd serve` over the GPU simulator
// and a generated powercap tree, once on a Unix socket and once on a loopback
// TCP port, and drives GET /cpu/get_cumulative_energy?cpu=true&dram=true and
// GET /gpu/get_power with N concurrent keep-alive connections (default 32),
// a fixed number of requests per route (default 200,000) and a time cap. It
// prints requests/s, latency percentiles and errors per route and transport.
//
//   zeusd_load [--zeusd PATH] [--sim-library PATH] [--requests N]
//              [--connections N] [--time-limit-s S] [--num-workers N]
//              [--transport unix|tcp|both] [--warmup N] [--check]
//
// --check makes the exit status 1 when a route misses the target
// (>= 20,000 requests/s, p99 < 5 ms, no errors). Only loopback and Unix
// sockets are used; the daemon is stopped (SIGTERM, then SIGKILL) and the
// temporary directory removed before exit.
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using tcp = asio::ip::tcp;
using unix_socket = asio::local::stream_protocol;

constexpr double kTargetRate = 20000.0;
constexpr double kTargetP99Us = 5000.0;

struct Options {
    std::string zeusd;
    std::string sim_library;
    std::uint64_t requests = 200000;
    unsigned connections = 32;
    double time_limit_s = 60.0;
    unsigned num_workers = 0;  // 0: zeusd's default
    std::string transport = "both";
    std::uint64_t warmup = 5000;
    bool check = false;
};

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "zeusd_load: %s\n", message.c_str());
    std::fprintf(stderr,
                 "usage: zeusd_load [--zeusd PATH] [--sim-library PATH] [--requests N] [--connections N]\n"
                 "                  [--time-limit-s S] [--num-workers N] [--transport unix|tcp|both]\n"
                 "                  [--warmup N] [--check]\n");
    std::exit(2);
}

std::string self_dir() {
    std::error_code error;
    const auto exe = fs::read_symlink("/proc/self/exe", error);
    return error ? std::string(".") : exe.parent_path().string();
}

Options parse_options(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(arg + " needs a value");
            return argv[++i];
        };
        try {
            if (arg == "--zeusd") options.zeusd = value();
            else if (arg == "--sim-library") options.sim_library = value();
            else if (arg == "--requests") options.requests = std::stoull(value());
            else if (arg == "--connections") options.connections = static_cast<unsigned>(std::stoul(value()));
            else if (arg == "--time-limit-s") options.time_limit_s = std::stod(value());
            else if (arg == "--num-workers") options.num_workers = static_cast<unsigned>(std::stoul(value()));
            else if (arg == "--transport") options.transport = value();
            else if (arg == "--warmup") options.warmup = std::stoull(value());
            else if (arg == "--check") options.check = true;
            else if (arg == "--help" || arg == "-h") usage_error("help");
            else usage_error("unknown argument " + arg);
        } catch (const std::logic_error&) {
            usage_error("bad value for " + arg);
        }
    }
    if (options.transport != "unix" && options.transport != "tcp" && options.transport != "both") {
        usage_error("--transport is unix, tcp or both");
    }
    if (options.connections == 0 || options.connections > 1024) usage_error("--connections must be 1..1024");
    if (options.requests == 0 || options.requests > 100'000'000) usage_error("--requests must be 1..1e8");
    if (!(options.time_limit_s > 0 && options.time_limit_s <= 3600)) usage_error("--time-limit-s must be in (0, 3600]");
    // Defaults: next to this executable (build*/bin), as the build lays them out.
    const std::string bin = self_dir();
    if (options.zeusd.empty()) {
        options.zeusd = fs::exists(bin + "/zeusd") ? bin + "/zeusd" : std::string("build/bin/zeusd");
    }
    if (options.sim_library.empty()) {
#ifdef ZEUS_BENCH_SIM_LIBRARY
        options.sim_library = ZEUS_BENCH_SIM_LIBRARY;
#else
        options.sim_library = bin + "/../lib/zeus-sim/libnvidia-ml.so.1";
#endif
    }
    if (!fs::exists(options.zeusd)) usage_error("no zeusd at " + options.zeusd + " (build target zeusd, or --zeusd)");
    if (!fs::exists(options.sim_library)) {
        usage_error("no simulator library at " + options.sim_library + " (build target zeus_sim_nvml, or --sim-library)");
    }
    return options;
}

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream out(path);
    out << text << '\n';
    if (!out) throw std::runtime_error("cannot write " + path.string());
}

// intel-rapl:0 (package-0) with a dram sub-zone, as zeusd reads them.
void make_powercap_tree(const fs::path& root) {
    const fs::path package = root / "intel-rapl:0";
    const fs::path dram = package / "intel-rapl:0:0";
    fs::create_directories(dram);
    write_file(package / "name", "package-0");
    write_file(package / "energy_uj", "123456789");
    write_file(package / "max_energy_range_uj", "262143328850");
    write_file(dram / "name", "dram");
    write_file(dram / "energy_uj", "2345678");
    write_file(dram / "max_energy_range_uj", "65712999613");
}

// A running `zeusd serve`; stopped on destruction.
class Daemon {
  public:
    Daemon(const Options& options, const fs::path& powercap, const std::vector<std::string>& listen_args) {
        std::vector<std::string> args = {options.zeusd, "serve"};
        args.insert(args.end(), listen_args.begin(), listen_args.end());
        if (options.num_workers > 0) {
            args.emplace_back("--num-workers");
            args.push_back(std::to_string(options.num_workers));
        }
        command_line_ = "zeusd";
        for (std::size_t i = 1; i < args.size(); ++i) command_line_ += " " + args[i];
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            ::setenv("ZEUS_SIMULATE", "1", 1);
            ::setenv("ZEUS_SIM_LIBRARY", options.sim_library.c_str(), 1);
            ::setenv("ZEUS_POWERCAP_ROOT", powercap.c_str(), 1);
            ::setenv("RUST_LOG", "warn", 1);
            std::vector<char*> argv;
            for (auto& arg : args) argv.push_back(arg.data());
            argv.push_back(nullptr);
            ::execv(argv[0], argv.data());
            std::perror("execv zeusd");
            ::_exit(127);
        }
    }
    ~Daemon() { stop(); }
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    [[nodiscard]] bool running() {
        if (pid_ <= 0) return false;
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return false;
        }
        return true;
    }
    [[nodiscard]] const std::string& command_line() const { return command_line_; }
    [[nodiscard]] pid_t pid() const { return pid_; }

    void stop() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGTERM);
        for (int i = 0; i < 100; ++i) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }

  private:
    pid_t pid_ = -1;
    std::string command_line_;
};

// CPU seconds (user + system, all threads) that a process has used so far.
double process_cpu_seconds(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto paren = text.rfind(')');
    if (paren == std::string::npos) return 0;
    std::istringstream fields(text.substr(paren + 2));
    std::string field;
    double ticks = 0;
    // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
    for (int index = 3; index <= 15 && fields >> field; ++index) {
        if (index == 14 || index == 15) ticks += std::stod(field);
    }
    return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double self_cpu_seconds() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct RouteResult {
    std::uint64_t completed = 0;
    std::uint64_t errors = 0;
    double seconds = 0;
    std::vector<std::uint32_t> latencies_us;  // one per completed request
    std::string first_error;
};

// One keep-alive connection sending requests back to back.
template <class Protocol>
class Connection : public std::enable_shared_from_this<Connection<Protocol>> {
  public:
    struct Shared {
        const std::string* request = nullptr;
        typename Protocol::endpoint endpoint;
        std::uint64_t budget = 0;  // requests left to start
        Clock::time_point deadline;
        RouteResult* result = nullptr;
        bool record = true;
    };

    Connection(asio::io_context& io, Shared& shared) : socket_(io), shared_(shared) {}

    void start() { connect(); }

  private:
    void connect() {
        beast::error_code ignored;
        socket_.close(ignored);
        socket_.async_connect(shared_.endpoint, [self = this->shared_from_this()](beast::error_code error) {
            if (error) {
                self->fail("connect: " + error.message());
                return;
            }
            if constexpr (std::is_same_v<Protocol, tcp>) {
                beast::error_code no_delay_error;
                self->socket_.set_option(tcp::no_delay(true), no_delay_error);
            }
            self->next();
        });
    }

    void next() {
        if (shared_.budget == 0 || Clock::now() >= shared_.deadline) return;
        --shared_.budget;
        started_ = Clock::now();
        asio::async_write(socket_, asio::buffer(*shared_.request),
                          [self = this->shared_from_this()](beast::error_code error, std::size_t) {
                              if (error) {
                                  self->fail("write: " + error.message());
                                  return;
                              }
                              self->read();
                          });
    }

    void read() {
        parser_.emplace();
        parser_->body_limit(1 << 20);
        http::async_read(socket_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code error, std::size_t) {
            self->on_response(error);
        });
    }

    void on_response(beast::error_code error) {
        if (error) {
            fail("read: " + error.message());
            return;
        }
        const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started_).count();
        const auto& response = parser_->get();
        RouteResult& result = *shared_.result;
        if (response.result() != http::status::ok || response.body().empty()) {
            if (result.first_error.empty()) {
                result.first_error = fmt::format("HTTP {}: {}", response.result_int(), response.body());
            }
            ++result.errors;
        } else if (shared_.record) {
            ++result.completed;
            result.latencies_us.push_back(static_cast<std::uint32_t>(std::min<std::int64_t>(elapsed, UINT32_MAX)));
        }
        if (!response.keep_alive()) {
            connect();
            return;
        }
        next();
    }

    // A failed request counts as an error; the connection is opened again.
    void fail(const std::string& what) {
        RouteResult& result = *shared_.result;
        if (result.first_error.empty()) result.first_error = what;
        ++result.errors;
        if (++failures_ > 100) return;  // give up on this connection
        buffer_.clear();
        connect();
    }

    typename Protocol::socket socket_;
    Shared& shared_;
    beast::flat_buffer buffer_;
    std::optional<http::response_parser<http::string_body>> parser_;
    Clock::time_point started_;
    unsigned failures_ = 0;
};

template <class Protocol>
RouteResult drive(const typename Protocol::endpoint& endpoint, const std::string& target, const Options& options,
                  std::uint64_t requests, bool record) {
    const std::string request = fmt::format("GET {} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: zeusd_load\r\n\r\n", target);
    RouteResult result;
    if (record) result.latencies_us.reserve(requests);
    asio::io_context io(1);
    typename Connection<Protocol>::Shared shared;
    shared.request = &request;
    shared.endpoint = endpoint;
    shared.budget = requests;
    shared.result = &result;
    shared.record = record;
    const auto started = Clock::now();
    shared.deadline = started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.time_limit_s));
    for (unsigned i = 0; i < options.connections; ++i) std::make_shared<Connection<Protocol>>(io, shared)->start();
    io.run();
    result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return result;
}

double percentile(const std::vector<std::uint32_t>& sorted, double p) {
    if (sorted.empty()) return 0;
    const auto index = static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1) + 0.5);
    return sorted[std::min(index, sorted.size() - 1)];
}

template <class Protocol>
bool wait_until_listening(const typename Protocol::endpoint& endpoint, Daemon& daemon) {
    asio::io_context io;
    for (int i = 0; i < 200; ++i) {
        if (!daemon.running()) return false;
        typename Protocol::socket socket(io);
        beast::error_code error;
        socket.connect(endpoint, error);
        if (!error) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

unsigned short free_tcp_port() {
    asio::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    return acceptor.local_endpoint().port();
}

struct Route {
    std::string name;
    std::string target;
};

template <class Protocol>
bool run_transport(const std::string& transport, const typename Protocol::endpoint& endpoint,
                   const std::vector<std::string>& listen_args, const fs::path& powercap, const Options& options) {
    Daemon daemon(options, powercap, listen_args);
    if (!wait_until_listening<Protocol>(endpoint, daemon)) {
        std::fprintf(stderr, "zeusd_load: %s did not start listening (see its output above)\n",
                     daemon.command_line().c_str());
        return false;
    }
    std::printf("# %s: %s\n", transport.c_str(), daemon.command_line().c_str());
    const std::vector<Route> routes = {{"cpu_energy", "/cpu/get_cumulative_energy?cpu=true&dram=true"},
                                       {"gpu_power", "/gpu/get_power"}};
    bool pass = true;
    for (const auto& route : routes) {
        if (options.warmup > 0) (void)drive<Protocol>(endpoint, route.target, options, options.warmup, false);
        const double server_cpu_before = process_cpu_seconds(daemon.pid());
        const double client_cpu_before = self_cpu_seconds();
        RouteResult result = drive<Protocol>(endpoint, route.target, options, options.requests, true);
        const double server_cpu = process_cpu_seconds(daemon.pid()) - server_cpu_before;
        const double client_cpu = self_cpu_seconds() - client_cpu_before;
        const double per_request = result.completed > 0 ? 1e6 / static_cast<double>(result.completed) : 0;
        std::sort(result.latencies_us.begin(), result.latencies_us.end());
        const double rate = result.seconds > 0 ? static_cast<double>(result.completed) / result.seconds : 0;
        const double p99 = percentile(result.latencies_us, 99);
        const bool ok = rate >= kTargetRate && p99 < kTargetP99Us && result.errors == 0 &&
                        result.completed == options.requests;
        pass = pass && ok;
        std::printf("%-5s %-11s requests %8llu  %6.2f s  %9.0f req/s  p50 %6.0f us  p90 %6.0f us  p99 %6.0f us  "
                    "max %7.0f us  errors %llu  %s\n",
                    transport.c_str(), route.name.c_str(), static_cast<unsigned long long>(result.completed),
                    result.seconds, rate, percentile(result.latencies_us, 50), percentile(result.latencies_us, 90), p99,
                    result.latencies_us.empty() ? 0.0 : static_cast<double>(result.latencies_us.back()),
                    static_cast<unsigned long long>(result.errors), ok ? "ok" : "MISSED");
        std::printf("      CPU per request: zeusd %.1f us, client %.1f us\n", server_cpu * per_request,
                    client_cpu * per_request);
        if (!result.first_error.empty()) std::printf("      first error: %s\n", result.first_error.c_str());
        if (result.completed < options.requests && result.errors == 0) {
            std::printf("      stopped by the time limit (%.0f s) after %llu requests\n", options.time_limit_s,
                        static_cast<unsigned long long>(result.completed));
        }
        std::fflush(stdout);
    }
    if (!daemon.running()) {
        std::fprintf(stderr, "zeusd_load: zeusd exited during the run\n");
        return false;
    }
    return pass;
}

}  // namespace

int main(int argc, char** argv) {
    ::signal(SIGPIPE, SIG_IGN);
    const Options options = parse_options(argc, argv);
    char pattern[] = "/tmp/zeusd-load-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) {
        std::perror("mkdtemp");
        return 2;
    }
    const fs::path dir = pattern;
    bool pass = true;
    try {
        make_powercap_tree(dir / "powercap");
        std::printf("# zeusd_load: %u connections, %llu requests per route (+%llu warm-up), time limit %.0f s, "
                    "%u hardware threads\n",
                    options.connections, static_cast<unsigned long long>(options.requests),
                    static_cast<unsigned long long>(options.warmup), options.time_limit_s,
                    std::thread::hardware_concurrency());
        if (options.transport != "tcp") {
            const std::string socket = (dir / "zeusd.sock").string();
            pass = run_transport<unix_socket>("unix", unix_socket::endpoint(socket), {"--socket-path", socket},
                                              dir / "powercap", options) &&
                   pass;
        }
        if (options.transport != "unix") {
            const auto port = free_tcp_port();
            const std::string address = fmt::format("127.0.0.1:{}", port);
            pass = run_transport<tcp>("tcp", tcp::endpoint(asio::ip::address_v4::loopback(), port),
                                      {"--mode", "tcp", "--tcp-bind-address", address}, dir / "powercap", options) &&
                   pass;
        }
    } catch (const std::exception& error) {
        std::fprintf(stderr, "zeusd_load: %s\n", error.what());
        pass = false;
    }
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    std::printf("# %s\n", pass ? "all routes met the target (>= 20000 req/s, p99 < 5 ms, no errors)"
                               : "some route missed the target (>= 20000 req/s, p99 < 5 ms, no errors)");
    return options.check && !pass ? 1 : 0;
}
