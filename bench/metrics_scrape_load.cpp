// Scrape benchmark of `zeus exporter`: starts the real exporter over the GPU
// simulator (8 GPUs) and a generated powercap tree (2 packages with DRAM),
// scrapes GET /metrics from N concurrent scrapers at a fixed rate each
// (default 4 × 10/s) for S seconds, and reports latency percentiles, the
// exporter's CPU use (whole process, from /proc) and its sampling thread's
// (zeus_exporter_sampling_cpu_seconds_total). Then the same load against
// Debian's prometheus-node-exporter serving its own metrics, as the
// reference point for what an exporter costs on this machine.
//
//   zeus_bench_metrics_scrape [--zeus PATH] [--sim-library PATH] [--seconds S]
//                             [--scrapers N] [--rate R] [--node-exporter PATH] [--check]
//
// --check: exit 1 unless the exporter's p99 < 1 ms with no errors and sampling
// uses < 1 % of a core (issue 12). Loopback only; every server started is
// stopped (SIGTERM, then SIGKILL) and the temporary directory removed.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "zeus/platform/http_client.hpp"
#include "support/build_paths.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Options {
    std::string zeus = zeus::testing::zeus_cli_path();
    std::string sim_library = zeus::testing::sim_nvml_library_path();
    std::string node_exporter = "/usr/bin/prometheus-node-exporter";
    double seconds = 10;
    unsigned scrapers = 4;
    double rate = 10;
    bool check = false;
    // --processes: 8 simulated processes on every GPU (zeus-sim burn --pid);
    // --attribution: the exporter with --attribution (docs/attribution.md).
    // Compare --processes with --processes --attribution.
    bool processes = false;
    bool attribution = false;
    std::string zeus_sim = zeus::testing::zeus_sim_cli_path();
};

unsigned free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

class Child {
  public:
    Child(std::vector<std::string> argv, const std::map<std::string, std::string>& env, const std::string& log) {
        pid_ = ::fork();
        if (pid_ == 0) {
            for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
            const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(fd, 1);
            ::dup2(fd, 2);
            std::vector<char*> args;
            for (auto& a : argv) args.push_back(a.data());
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
    }
    ~Child() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGTERM);
        for (int i = 0; i < 100; ++i) {
            if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
            std::this_thread::sleep_for(20ms);
        }
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    [[nodiscard]] pid_t pid() const { return pid_; }

    // utime + stime of the whole process (all threads), in seconds.
    [[nodiscard]] double cpu_seconds() const {
        std::ifstream in(fmt::format("/proc/{}/stat", pid_));
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::istringstream fields(text.substr(text.rfind(')') + 2));
        std::string field;
        double ticks = 0;
        for (int i = 3; i <= 15 && fields >> field; ++i) {
            if (i == 14 || i == 15) ticks += std::stod(field);
        }
        return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
    }

  private:
    pid_t pid_ = -1;
};

std::optional<std::string> get(zeus::HttpClient& client, const std::string& target) {
    auto reply = client.request("GET", target, 5000ms);
    if (!reply || reply->status != 200) return std::nullopt;
    return reply->body;
}

zeus::HttpEndpoint endpoint(unsigned port) {
    const std::string base = fmt::format("http://127.0.0.1:{}", port);
    return zeus::HttpEndpoint{base, {}, base, "", "", {}, 2000ms, true};
}

bool wait_ready(unsigned port) {
    zeus::HttpClient client(endpoint(port));
    for (int i = 0; i < 200; ++i) {
        if (get(client, "/metrics")) return true;
        std::this_thread::sleep_for(50ms);
    }
    return false;
}

double metric_value(const std::string& body, const std::string& name) {
    const auto at = body.find("\n" + name + " ");
    if (at == std::string::npos) return -1;
    return std::stod(body.substr(at + name.size() + 2));
}

struct Result {
    std::vector<double> latencies_ms;
    std::size_t errors = 0;
    std::size_t body_bytes = 0;
    double process_cpu_s = 0;
    double wall_s = 0;
    std::optional<double> sampling_cpu_s;
};

// N scrapers, each on its own keep-alive connection, each at `rate`/s on a
// fixed schedule (a slow answer does not slow the offered load).
Result drive(const Options& opts, unsigned port, const Child& server, bool zeus_exporter) {
    Result result;
    zeus::HttpClient probe(endpoint(port));
    const auto warm = get(probe, "/metrics");
    result.body_bytes = warm ? warm->size() : 0;
    const double sampling_before = zeus_exporter && warm ? metric_value(*warm, "zeus_exporter_sampling_cpu_seconds_total") : 0;
    const double cpu_before = server.cpu_seconds();
    const auto start = Clock::now();
    std::vector<std::vector<double>> latencies(opts.scrapers);
    std::atomic<std::size_t> errors{0};
    std::vector<std::thread> threads;
    const auto count = static_cast<std::size_t>(opts.seconds * opts.rate);
    for (unsigned s = 0; s < opts.scrapers; ++s) {
        threads.emplace_back([&, s] {
            zeus::HttpClient client(endpoint(port));
            (void)get(client, "/metrics");  // connect outside the measurement
            // Scrapers spread over the period, as independent Prometheus servers would be.
            const auto offset = std::chrono::duration<double>(s / (opts.rate * opts.scrapers));
            for (std::size_t i = 0; i < count; ++i) {
                std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                                          offset + std::chrono::duration<double>(i / opts.rate)));
                const auto t0 = Clock::now();
                const auto body = get(client, "/metrics");
                const auto t1 = Clock::now();
                if (!body || body->empty()) ++errors;
                latencies[s].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
            }
        });
    }
    for (auto& t : threads) t.join();
    result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    result.process_cpu_s = server.cpu_seconds() - cpu_before;
    if (zeus_exporter) {
        if (const auto after = get(probe, "/metrics")) {
            result.sampling_cpu_s = metric_value(*after, "zeus_exporter_sampling_cpu_seconds_total") - sampling_before;
        }
    }
    for (auto& l : latencies) result.latencies_ms.insert(result.latencies_ms.end(), l.begin(), l.end());
    std::sort(result.latencies_ms.begin(), result.latencies_ms.end());
    result.errors = errors;
    return result;
}

double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0;
    const auto i = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
    return sorted[std::min(i, sorted.size() - 1)];
}

void print(const std::string& name, const Options& opts, const Result& r) {
    std::printf("| %s | %zu | %zu | %.3f | %.3f | %.3f | %.3f | %zu | %.2f %% | %s |\n", name.c_str(),
                r.latencies_ms.size(), r.errors, percentile(r.latencies_ms, 0.5), percentile(r.latencies_ms, 0.9),
                percentile(r.latencies_ms, 0.99), r.latencies_ms.empty() ? 0.0 : r.latencies_ms.back(), r.body_bytes,
                100 * r.process_cpu_s / r.wall_s,
                r.sampling_cpu_s ? fmt::format("{:.3f} %", 100 * *r.sampling_cpu_s / r.wall_s).c_str() : "–");
    (void)opts;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

}  // namespace

int main(int argc, char** argv) {
    Options opts;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--attribution" || a == "--processes") {
            (a == "--attribution" ? opts.attribution : opts.processes) = true;
            continue;
        }
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--zeus") opts.zeus = next();
        else if (a == "--sim-library") opts.sim_library = next();
        else if (a == "--node-exporter") opts.node_exporter = next();
        else if (a == "--seconds") opts.seconds = std::stod(next());
        else if (a == "--scrapers") opts.scrapers = static_cast<unsigned>(std::stoul(next()));
        else if (a == "--rate") opts.rate = std::stod(next());
        else if (a == "--check") opts.check = true;
        else {
            std::fprintf(stderr,
                         "usage: %s [--zeus PATH] [--sim-library PATH] [--seconds S] [--scrapers N] "
                         "[--rate R] [--node-exporter PATH] [--check] [--processes] [--attribution]\n",
                         argv[0]);
            return 2;
        }
    }
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("zeus-scrape-bench-{}", ::getpid());
    std::filesystem::create_directories(dir);
    // The project's own cost: no simulated driver latency (docs/simulator.md).
    write_file(dir / "sim.json",
               R"({"gpus": [{"model": "H100-SXM5-80GB", "count": 8, "driver_latency_us": {"default": 0}}]})");
    for (int p = 0; p < 2; ++p) {
        const auto zone = dir / "powercap" / fmt::format("intel-rapl:{}", p);
        write_file(zone / "name", fmt::format("package-{}\n", p));
        write_file(zone / "energy_uj", "1000000\n");
        write_file(zone / "max_energy_range_uj", "262143328850\n");
        const auto dram = zone / fmt::format("intel-rapl:{}:0", p);
        write_file(dram / "name", "dram\n");
        write_file(dram / "energy_uj", "1000000\n");
        write_file(dram / "max_energy_range_uj", "65712999613\n");
    }
    const std::map<std::string, std::string> env{{"ZEUS_SIM_CONFIG", (dir / "sim.json").string()},
                                                 {"ZEUS_SIM_STATE", (dir / "sim-state").string()},
                                                 {"ZEUS_SIM_LIBRARY", opts.sim_library},
                                                 {"ZEUS_POWERCAP_ROOT", (dir / "powercap").string()}};
    std::printf("Load: %u scrapers × %.0f scrapes/s for %.0f s\n\n", opts.scrapers, opts.rate, opts.seconds);
    std::printf("| exporter | scrapes | errors | p50 ms | p90 ms | p99 ms | max ms | body bytes | process CPU (one core) | sampling CPU |\n");
    std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    int status = 0;
    {
        const unsigned port = free_port();
        std::vector<std::string> exporter_args{opts.zeus, "exporter", "--simulate", "--listen",
                                               fmt::format("127.0.0.1:{}", port)};
        std::vector<std::unique_ptr<Child>> processes;
        if (opts.attribution) {
            exporter_args.insert(exporter_args.end(), {"--attribution", "--proc", (dir / "proc").string()});
        }
        for (int pid = 4242; opts.processes && pid < 4250; ++pid) {
            write_file(dir / "proc" / std::to_string(pid) / "cgroup",
                       fmt::format("0::/kubepods.slice/kubepods-pod4f1b3a8e_9c7d_4e2a_8b1f_{:012x}.slice/"
                                   "cri-containerd-{:064x}.scope\n",
                                   pid, pid));
            processes.push_back(
                std::make_unique<Child>(std::vector<std::string>{opts.zeus_sim, "burn", "--gpu", "all", "--seconds",
                                                                 "3600", "--util", "0.1", "--pid", std::to_string(pid)},
                                        env, (dir / fmt::format("burn-{}.log", pid)).string()));
        }
        Child exporter(exporter_args, env, (dir / "exporter.log").string());
        if (!wait_ready(port)) {
            std::fprintf(stderr, "zeus exporter did not start; see its log\n");
            return 1;
        }
        std::this_thread::sleep_for(1500ms);  // a few sweeps first
        const Result r = drive(opts, port, exporter, true);
        print(fmt::format("zeus exporter{} (8 GPUs{}, 2 packages)", opts.attribution ? " --attribution" : "",
                          opts.processes ? " x 8 processes" : ""),
              opts, r);
        const double p99 = percentile(r.latencies_ms, 0.99);
        const double sampling = r.sampling_cpu_s.value_or(1) / r.wall_s;
        if (opts.check && (p99 >= 1.0 || r.errors > 0 || sampling >= 0.01)) status = 1;
        // Idle cost (no scrapes): what sampling alone takes.
        zeus::HttpClient probe(endpoint(port));
        const double cpu0 = exporter.cpu_seconds();
        std::this_thread::sleep_for(std::chrono::duration<double>(opts.seconds));
        std::printf("\nzeus exporter idle (sampling only, no scrapes): %.3f %% of one core over %.0f s\n",
                    100 * (exporter.cpu_seconds() - cpu0) / opts.seconds, opts.seconds);
    }
    if (std::filesystem::exists(opts.node_exporter)) {
        const unsigned port = free_port();
        Child node({opts.node_exporter, fmt::format("--web.listen-address=127.0.0.1:{}", port)}, {},
                   (dir / "node-exporter.log").string());
        if (wait_ready(port)) {
            std::this_thread::sleep_for(500ms);
            std::printf("\n| exporter | scrapes | errors | p50 ms | p90 ms | p99 ms | max ms | body bytes | process CPU (one core) | sampling CPU |\n");
            std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
            print("prometheus-node-exporter (Debian, default collectors)", opts, drive(opts, port, node, false));
        } else {
            std::fprintf(stderr, "prometheus-node-exporter did not start\n");
        }
    } else {
        std::printf("\n%s is missing (scripts/setup.sh installs it): no comparison\n", opts.node_exporter.c_str());
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return status;
}
