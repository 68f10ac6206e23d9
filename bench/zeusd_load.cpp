// Load benchmark of zeusd: starts a real `zeusd serve` over the GPU simulator
// and a generated powercap tree, once on a Unix socket and once on a loopback
// TCP port, and drives GET /cpu/get_cumulative_energy?cpu=true&dram=true and
// GET /gpu/get_power (and, with --routes, POST /gpu/set_persistence_mode with
// the value the GPU already has) with N concurrent keep-alive connections
// (default 32), a fixed number of requests per route (default 200,000) and a
// time cap. It prints requests/s, latency percentiles, errors and the CPU
// time per request of the daemon and of the client, per route and transport.
//
//   zeusd_load [--zeusd PATH] [--sim-library PATH] [--requests N]
//              [--connections N] [--time-limit-s S] [--num-workers N]
//              [--transport unix|tcp|both] [--warmup N] [--check]
//              [--routes cpu_energy,gpu_power,gpu_control]
//              [--original PATH] [--rounds N] [--driver-latency-us US]
//
// Both daemons run over the simulator's default two A100s with no simulated
// driver latency (--driver-latency-us 0, the default), so the figures are the
// daemons' own cost; with the simulator's default latency (20 us per NVML
// call, docs/simulator.md) every request would spin 40 us in the driver, and
// the comparison would measure mostly that. --driver-latency-us N puts N us on
// every device call to see how each daemon's throughput holds up behind a
// slow driver.
//
// --original names the original Rust zeusd (crate zeusd 0.5.0): each round
// then runs ours and the original one after the other on every transport
// (A B A B: the same machine load for both), and a table of medians over the
// rounds closes the output. The original loads the simulator through
// LD_LIBRARY_PATH; it reads RAPL only at /sys/class/powercap, so for the CPU
// route it runs in a private mount namespace with a tmpfs over /sys/class
// holding the same generated tree (needs root; the route is skipped with a
// message otherwise).
//
// --check makes the exit status 1 when a route of ours misses the issue's
// target (>= 20,000 requests/s, p99 < 5 ms, no errors). Only loopback and
// Unix sockets are used; each daemon is stopped (SIGTERM, then SIGKILL) and
// the temporary directory removed before exit.
#include <sched.h>
#include <sys/mount.h>
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

#include "support/build_paths.hpp"

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
    std::vector<std::string> routes = {"cpu_energy", "gpu_power"};
    std::string original;  // the original Rust zeusd; empty: ours only
    unsigned rounds = 1;
    double driver_latency_us = 0;  // per simulated NVML call
};

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "zeusd_load: %s\n", message.c_str());
    std::fprintf(stderr,
                 "usage: zeusd_load [--zeusd PATH] [--sim-library PATH] [--requests N] [--connections N]\n"
                 "                  [--time-limit-s S] [--num-workers N] [--transport unix|tcp|both]\n"
                 "                  [--warmup N] [--check] [--routes cpu_energy,gpu_power,gpu_control]\n"
                 "                  [--original PATH] [--rounds N] [--driver-latency-us US]\n");
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
            else if (arg == "--original") options.original = value();
            else if (arg == "--rounds") options.rounds = static_cast<unsigned>(std::stoul(value()));
            else if (arg == "--driver-latency-us")
                options.driver_latency_us = std::stod(value());
            else if (arg == "--routes") {
                options.routes.clear();
                std::istringstream list(value());
                for (std::string name; std::getline(list, name, ',');) options.routes.push_back(name);
            }
            else if (arg == "--help" || arg == "-h") usage_error("help");
            else usage_error("unknown argument " + arg);
        } catch (const std::logic_error&) {
            usage_error("bad value for " + arg);
        }
    }
    if (options.transport != "unix" && options.transport != "tcp" && options.transport != "both") {
        usage_error("--transport is unix, tcp or both");
    }
    for (const auto& route : options.routes) {
        if (route != "cpu_energy" && route != "gpu_power" && route != "gpu_control") {
            usage_error("unknown route '" + route + "' in --routes (cpu_energy, gpu_power, gpu_control)");
        }
    }
    if (options.routes.empty()) usage_error("--routes needs at least one of cpu_energy, gpu_power, gpu_control");
    if (options.rounds == 0 || options.rounds > 100) usage_error("--rounds must be 1..100");
    if (!(options.driver_latency_us >= 0 && options.driver_latency_us <= 1e6)) {
        usage_error("--driver-latency-us must be 0..1000000 (microseconds per simulated NVML call)");
    }
    if (!options.original.empty() && !fs::exists(options.original)) {
        usage_error("no original zeusd at " + options.original + " (cargo install zeusd --version 0.5.0 --root DIR)");
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
        options.sim_library = zeus::testing::sim_nvml_library_path();
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

// The simulator's default GPUs (two A100s) with `latency_us` on every device call.
void make_simulator_config(const fs::path& path, double latency_us) {
    write_file(path, fmt::format(R"({{"gpus": [{{"model": "A100-SXM4-40GB", "count": 2, )"
                                 R"("driver_latency_us": {{"default": {}}}}}]}})",
                                 latency_us));
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

// The original reads RAPL only under /sys/class/powercap/intel-rapl. In a
// private mount namespace (so nothing leaks to the machine) a tmpfs over
// /sys/class holds the same tree ours reads through ZEUS_POWERCAP_ROOT.
// Returns false when that is not allowed (not root, no CAP_SYS_ADMIN).
bool fake_sysfs_rapl() {
    if (::unshare(CLONE_NEWNS) != 0) return false;
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
    if (::mount("tmpfs", "/sys/class", "tmpfs", 0, "mode=755") != 0) return false;
    try {
        make_powercap_tree("/sys/class/powercap/intel-rapl");
    } catch (const std::exception&) {
        return false;
    }
    return true;
}

// Whether fake_sysfs_rapl works here (tried in a child, which then exits).
bool can_fake_sysfs_rapl() {
    const pid_t pid = ::fork();
    if (pid < 0) return false;
    if (pid == 0) ::_exit(fake_sysfs_rapl() ? 0 : 1);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

enum class Implementation { Ours, Original };

const char* name_of(Implementation implementation) {
    return implementation == Implementation::Ours ? "ours" : "original";
}

// A running `zeusd serve`; stopped on destruction.
class Daemon {
  public:
    Daemon(const Options& options, Implementation implementation, const fs::path& powercap,
           const std::vector<std::string>& listen_args) {
        const std::string& binary = implementation == Implementation::Ours ? options.zeusd : options.original;
        std::vector<std::string> args = {binary, "serve"};
        args.insert(args.end(), listen_args.begin(), listen_args.end());
        if (options.num_workers > 0) {
            args.emplace_back("--num-workers");
            args.push_back(std::to_string(options.num_workers));
        }
        command_line_ = binary;
        for (std::size_t i = 1; i < args.size(); ++i) command_line_ += " " + args[i];
        const std::string sim_directory = fs::path(options.sim_library).parent_path().string();
        const std::string runtime_directory = powercap.parent_path().string();
        const std::string simulator_config = (powercap.parent_path() / "sim.json").string();
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            if (implementation == Implementation::Original) {
                // The original links libnvidia-ml.so.1 itself: the simulator's, found first.
                ::setenv("LD_LIBRARY_PATH", sim_directory.c_str(), 1);
                if (!fake_sysfs_rapl()) std::fprintf(stderr, "zeusd_load: no fake RAPL for the original\n");
            }
            ::setenv("ZEUS_SIMULATE", "1", 1);
            ::setenv("ZEUS_SIM_LIBRARY", options.sim_library.c_str(), 1);
            ::setenv("ZEUS_SIM_CONFIG", simulator_config.c_str(), 1);
            ::setenv("ZEUS_POWERCAP_ROOT", powercap.c_str(), 1);
            // Where ours keeps its restore ledger in TCP mode.
            ::setenv("RUNTIME_DIRECTORY", runtime_directory.c_str(), 1);
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
        bool expect_body = true;
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
        // A daemon that found no devices answers read routes with `{}` maps: fast, and measuring nothing.
        const bool names_device_0 = response.body().find("\"0\"") != std::string::npos;
        if (response.result() != http::status::ok || (shared_.expect_body && !names_device_0)) {
            if (result.first_error.empty()) {
                result.first_error = fmt::format("HTTP {}: {}{}", response.result_int(), response.body(),
                                                 names_device_0 ? "" : " (expected an answer for device 0)");
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

struct Route {
    std::string name;
    std::string method;
    std::string target;
};

// The GPU control route sets persistence mode to what the simulated GPU
// already has (enabled): the request path, the device call and, for ours, the
// restore ledger are all exercised, and the GPU ends as it began.
const std::vector<Route>& all_routes() {
    static const std::vector<Route> routes = {
        {"cpu_energy", "GET", "/cpu/get_cumulative_energy?cpu=true&dram=true"},
        {"gpu_power", "GET", "/gpu/get_power"},
        {"gpu_control", "POST", "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true"},
    };
    return routes;
}

template <class Protocol>
RouteResult drive(const typename Protocol::endpoint& endpoint, const Route& route, const Options& options,
                  std::uint64_t requests, bool record) {
    const std::string request =
        fmt::format("{} {} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: zeusd_load\r\n{}\r\n", route.method,
                    route.target, route.method == "GET" ? "" : "Content-Length: 0\r\n");
    RouteResult result;
    if (record) result.latencies_us.reserve(requests);
    asio::io_context io(1);
    typename Connection<Protocol>::Shared shared;
    shared.request = &request;
    shared.endpoint = endpoint;
    shared.budget = requests;
    shared.result = &result;
    shared.record = record;
    shared.expect_body = route.method == "GET";
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

// One route's figures from one run, for the table of medians.
struct Sample {
    std::string transport;
    std::string route;
    Implementation implementation;
    double rate = 0;
    double daemon_cpu_us = 0;
    double p50_us = 0;
    double p99_us = 0;
    std::uint64_t errors = 0;
};

struct Run {
    const Options& options;
    fs::path powercap;
    bool original_has_rapl = false;
    std::vector<Sample> samples;
};

template <class Protocol>
bool run_transport(Run& run, Implementation implementation, const std::string& transport,
                   const typename Protocol::endpoint& endpoint, const std::vector<std::string>& listen_args) {
    const Options& options = run.options;
    Daemon daemon(options, implementation, run.powercap, listen_args);
    if (!wait_until_listening<Protocol>(endpoint, daemon)) {
        std::fprintf(stderr, "zeusd_load: %s did not start listening (see its output above)\n",
                     daemon.command_line().c_str());
        return false;
    }
    std::printf("# %s %s: %s\n", transport.c_str(), name_of(implementation), daemon.command_line().c_str());
    bool pass = true;
    for (const auto& route : all_routes()) {
        if (std::find(options.routes.begin(), options.routes.end(), route.name) == options.routes.end()) continue;
        if (implementation == Implementation::Original && route.name == "cpu_energy" && !run.original_has_rapl) {
            std::printf("%-5s %-11s skipped for the original: it reads only /sys/class/powercap, which this "
                        "machine lacks, and a private mount namespace to fake it needs root\n",
                        transport.c_str(), route.name.c_str());
            continue;
        }
        if (options.warmup > 0) (void)drive<Protocol>(endpoint, route, options, options.warmup, false);
        const double server_cpu_before = process_cpu_seconds(daemon.pid());
        const double client_cpu_before = self_cpu_seconds();
        RouteResult result = drive<Protocol>(endpoint, route, options, options.requests, true);
        const double server_cpu = process_cpu_seconds(daemon.pid()) - server_cpu_before;
        const double client_cpu = self_cpu_seconds() - client_cpu_before;
        const double per_request = result.completed > 0 ? 1e6 / static_cast<double>(result.completed) : 0;
        std::sort(result.latencies_us.begin(), result.latencies_us.end());
        const double rate = result.seconds > 0 ? static_cast<double>(result.completed) / result.seconds : 0;
        const double p99 = percentile(result.latencies_us, 99);
        const bool ok = rate >= kTargetRate && p99 < kTargetP99Us && result.errors == 0 &&
                        result.completed == options.requests;
        if (implementation == Implementation::Ours) pass = pass && ok;
        std::printf("%-5s %-11s %-8s requests %8llu  %6.2f s  %9.0f req/s  p50 %6.0f us  p90 %6.0f us  p99 %6.0f us  "
                    "max %7.0f us  errors %llu  %s\n",
                    transport.c_str(), route.name.c_str(), name_of(implementation),
                    static_cast<unsigned long long>(result.completed), result.seconds, rate,
                    percentile(result.latencies_us, 50), percentile(result.latencies_us, 90), p99,
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
        run.samples.push_back(Sample{transport, route.name, implementation, rate, server_cpu * per_request,
                                     percentile(result.latencies_us, 50), p99, result.errors});
    }
    if (!daemon.running()) {
        std::fprintf(stderr, "zeusd_load: %s exited during the run\n", daemon.command_line().c_str());
        return false;
    }
    return pass;
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const auto middle = values.size() / 2;
    return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// Medians over the rounds, one row per transport and route, ours beside the original.
void print_comparison(const Run& run) {
    std::printf("\n# medians of %u round(s), A B A B (ours, then the original, on each transport in each round)\n",
                run.options.rounds);
    std::printf("| transport | route | req/s ours | req/s original | ratio | zeusd CPU/request ours | original | ratio "
                "| p50 ours | original | p99 ours | original | errors ours / original |\n");
    std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (const std::string transport : {"unix", "tcp"}) {
        for (const auto& route : all_routes()) {
            auto pick = [&](Implementation implementation, double Sample::*field) {
                std::vector<double> values;
                for (const auto& sample : run.samples) {
                    if (sample.transport == transport && sample.route == route.name &&
                        sample.implementation == implementation) {
                        values.push_back(sample.*field);
                    }
                }
                return values;
            };
            auto errors = [&](Implementation implementation) {
                std::uint64_t total = 0;
                for (const auto& sample : run.samples) {
                    if (sample.transport == transport && sample.route == route.name &&
                        sample.implementation == implementation) {
                        total += sample.errors;
                    }
                }
                return total;
            };
            const auto ours_rate = pick(Implementation::Ours, &Sample::rate);
            const auto original_rate = pick(Implementation::Original, &Sample::rate);
            if (ours_rate.empty() || original_rate.empty()) continue;
            const double ours_cpu = median(pick(Implementation::Ours, &Sample::daemon_cpu_us));
            const double original_cpu = median(pick(Implementation::Original, &Sample::daemon_cpu_us));
            std::printf("| %s | %s | %.0f | %.0f | %.2f | %.1f us | %.1f us | %.2f | %.0f us | %.0f us | %.0f us | "
                        "%.0f us | %llu / %llu |\n",
                        transport.c_str(), route.name.c_str(), median(ours_rate), median(original_rate),
                        median(ours_rate) / median(original_rate), ours_cpu, original_cpu,
                        original_cpu > 0 ? ours_cpu / original_cpu : 0.0,
                        median(pick(Implementation::Ours, &Sample::p50_us)),
                        median(pick(Implementation::Original, &Sample::p50_us)),
                        median(pick(Implementation::Ours, &Sample::p99_us)),
                        median(pick(Implementation::Original, &Sample::p99_us)),
                        static_cast<unsigned long long>(errors(Implementation::Ours)),
                        static_cast<unsigned long long>(errors(Implementation::Original)));
        }
    }
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
    Run run{options, dir / "powercap", false, {}};
    try {
        make_powercap_tree(run.powercap);
        make_simulator_config(dir / "sim.json", options.driver_latency_us);
        std::vector<Implementation> implementations = {Implementation::Ours};
        if (!options.original.empty()) {
            implementations.push_back(Implementation::Original);
            run.original_has_rapl = can_fake_sysfs_rapl();
        }
        std::printf(
            "# zeusd_load: %u connections, %llu requests per route (+%llu warm-up), time limit %.0f s, "
            "%u hardware threads, %u round(s), simulated driver latency %g us per NVML call\n",
            options.connections, static_cast<unsigned long long>(options.requests),
            static_cast<unsigned long long>(options.warmup), options.time_limit_s, std::thread::hardware_concurrency(),
            options.rounds, options.driver_latency_us);
        for (unsigned round = 1; round <= options.rounds; ++round) {
            if (options.rounds > 1) std::printf("# round %u\n", round);
            if (options.transport != "tcp") {
                for (const auto implementation : implementations) {
                    const std::string socket = (dir / "zeusd.sock").string();
                    pass = run_transport<unix_socket>(run, implementation, "unix", unix_socket::endpoint(socket),
                                                      {"--socket-path", socket}) &&
                           pass;
                    std::error_code ignored;
                    fs::remove(socket, ignored);  // the original leaves its socket file behind
                }
            }
            if (options.transport != "unix") {
                for (const auto implementation : implementations) {
                    const auto port = free_tcp_port();
                    const std::string address = fmt::format("127.0.0.1:{}", port);
                    pass = run_transport<tcp>(run, implementation, "tcp",
                                              tcp::endpoint(asio::ip::address_v4::loopback(), port),
                                              {"--mode", "tcp", "--tcp-bind-address", address}) &&
                           pass;
                }
            }
        }
        if (!options.original.empty()) print_comparison(run);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "zeusd_load: %s\n", error.what());
        pass = false;
    }
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    std::printf("# %s\n", pass ? "all routes of ours met the target (>= 20000 req/s, p99 < 5 ms, no errors)"
                               : "some route of ours missed the target (>= 20000 req/s, p99 < 5 ms, no errors)");
    return options.check && !pass ? 1 : 0;
}
