#include "prometheus_servers.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/listening_line.hpp"
#include "zeus/platform/http_client.hpp"

namespace zeus::testing {
std::filesystem::path ServerProcess::make_dir(const std::string& what) {
    auto dir = std::filesystem::temp_directory_path() /
               ("zeus-" + what + "-" + std::to_string(::getpid()) + "-" + std::to_string(free_port()));
    std::filesystem::create_directories(dir);
    return dir;
}

unsigned free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        ADD_FAILURE() << "cannot bind a loopback port";
    }
    ::close(fd);
    return ntohs(addr.sin_port);
}

namespace {

pid_t spawn(const std::string& binary, std::vector<std::string> argv_text, const std::filesystem::path& dir) {
    argv_text.insert(argv_text.begin(), binary);
    const std::string log_path = (dir / "server.log").string();
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        ::dup2(log, 1);
        ::dup2(log, 2);
        if (::chdir(dir.c_str()) != 0) ::_exit(126);
        std::vector<char*> argv;
        for (auto& a : argv_text) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(binary.c_str(), argv.data());
        ::_exit(127);
    }
    return pid;
}

}  // namespace

ServerProcess::ServerProcess(Launch launch, const std::filesystem::path& dir)
    : what_(launch.what), dir_(dir), port_(launch.port.value_or(0)) {
    const std::string& binary = launch.binary;
    const std::string& what = launch.what;
    const auto& port = launch.port;
    if (!std::filesystem::exists(binary)) {
        ADD_FAILURE() << binary << " is missing: run scripts/setup.sh (it installs Debian's " << what << ")";
        return;
    }
    // Ours get port 0, so one try; the others a port picked here, which
    // another process may take first, so up to three.
    const int attempts = launch.listening_marker || port ? 1 : 3;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        if (!port && !launch.listening_marker) port_ = free_port();
        std::vector<std::string> args = launch.args;
        args.push_back(launch.listen_flag + "127.0.0.1:" + std::to_string(port_));
        pid_ = spawn(binary, args, dir_);
        if (launch.listening_marker) {
            try {
                port_ = wait_for_listening(dir_ / "server.log", pid_, *launch.listening_marker).port;
            } catch (const std::runtime_error& error) {
                stop_now();
                ADD_FAILURE() << what << ": " << error.what();
                return;
            }
        }
        base_url_ = "http://127.0.0.1:" + std::to_string(port_);
        if (wait_ready(launch.ready_path)) return;
        stop_now();
    }
    ADD_FAILURE() << what << " did not become ready on " << base_url_ << "; its log:\n" << log();
}

bool ServerProcess::wait_ready(const std::string& ready_path) {
    HttpClient client(HttpEndpoint{base_url_, {}, what_, "", "", {}, std::chrono::milliseconds(1000), true});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return false;  // exited: the port was taken, or a bad flag
        }
        auto reply = client.request("GET", ready_path, std::chrono::milliseconds(1000));
        if (reply && reply->status == 200) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

void ServerProcess::stop_now() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
}

ServerProcess::~ServerProcess() {
    if (pid_ > 0) {
        ::kill(pid_, SIGTERM);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        int status = 0;
        while (::waitpid(pid_, &status, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > deadline) {
                ::kill(pid_, SIGKILL);
                ::waitpid(pid_, &status, 0);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

std::string ServerProcess::log() const {
    std::ifstream in(dir_ / "server.log");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

Pushgateway::Pushgateway(std::optional<unsigned> port)
    // Memory only (--persistence.file=): Debian's default file is shared by every
    // gateway on the machine, so pushes from one test would reach the next.
    : ServerProcess(Launch{"/usr/bin/prometheus-pushgateway",
                           "prometheus-pushgateway",
                           {"--persistence.file="},
                           "--web.listen-address=",
                           "/-/ready",
                           port},
                    make_dir("pushgateway")) {}

namespace {
std::filesystem::path prometheus_dir(const std::vector<std::string>& targets, double interval_s) {
    auto dir = ServerProcess::make_dir("prometheus");
    std::ofstream config(dir / "prometheus.yml");
    config << "global:\n  scrape_interval: " << interval_s << "s\n  scrape_timeout: " << interval_s
           << "s\n  evaluation_interval: " << interval_s << "s\nscrape_configs:\n  - job_name: zeus\n"
           << "    static_configs:\n      - targets: [";
    for (std::size_t i = 0; i < targets.size(); ++i) config << (i ? ", " : "") << "'" << targets[i] << "'";
    config << "]\n";
    return dir;
}
std::filesystem::path prometheus_dir(const std::string& config_yaml) {
    auto dir = ServerProcess::make_dir("prometheus");
    std::ofstream(dir / "prometheus.yml") << config_yaml;
    return dir;
}
}  // namespace

PrometheusServer::PrometheusServer(const std::vector<std::string>& targets, double interval_s)
    : PrometheusServer(targets, interval_s, prometheus_dir(targets, interval_s)) {}

PrometheusServer::PrometheusServer(const std::string& config_yaml)
    : PrometheusServer({}, 0, prometheus_dir(config_yaml)) {}

PrometheusServer::PrometheusServer(const std::vector<std::string>& /*targets*/, double /*interval_s*/,
                                   const std::filesystem::path& dir)
    : ServerProcess(Launch{"/usr/bin/prometheus", "prometheus",
                           {"--config.file=" + (dir / "prometheus.yml").string(),
                            "--storage.tsdb.path=" + (dir / "data").string()},
                           "--web.listen-address=", "/-/ready", std::nullopt},
                    dir) {}

std::vector<ParsedSample> parse_exposition(const std::string& body) {
    std::vector<ParsedSample> out;
    std::istringstream lines(body);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.empty() || line[0] == '#') continue;
        ParsedSample sample;
        std::size_t i = line.find_first_of("{ ");
        sample.name = line.substr(0, i);
        if (i != std::string::npos && line[i] == '{') {
            ++i;
            while (i < line.size() && line[i] != '}') {
                const auto eq = line.find('=', i);
                const std::string name = line.substr(i, eq - i);
                std::string value;
                std::size_t j = eq + 2;  // past ="
                for (; j < line.size() && line[j] != '"'; ++j) {
                    if (line[j] == '\\' && j + 1 < line.size()) {
                        ++j;
                        value += line[j] == 'n' ? '\n' : line[j];
                    } else {
                        value += line[j];
                    }
                }
                sample.labels[name] = value;
                i = j + 1;
                if (i < line.size() && line[i] == ',') ++i;
            }
            ++i;
        }
        const std::string rest = line.substr(std::min(i, line.size()));
        std::istringstream value_text(rest);
        std::string value;
        value_text >> value;
        char* end = nullptr;
        sample.value = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0') ADD_FAILURE() << "malformed exposition line: " << line;
        out.push_back(std::move(sample));
    }
    return out;
}

std::vector<ParsedSample> find_samples(const std::vector<ParsedSample>& samples, const std::string& name,
                                       const std::map<std::string, std::string>& match) {
    std::vector<ParsedSample> out;
    for (const auto& s : samples) {
        if (s.name != name) continue;
        bool all = true;
        for (const auto& [k, v] : match) {
            auto it = s.labels.find(k);
            if (it == s.labels.end() || it->second != v) all = false;
        }
        if (all) out.push_back(s);
    }
    return out;
}

std::string http_get(const std::string& base_url, const std::string& target, const std::vector<std::string>& headers) {
    HttpClient client(HttpEndpoint{base_url, {}, base_url, "", "", {}, std::chrono::milliseconds(2000), true});
    HttpRequest request;
    request.target = target;
    request.headers = headers;
    request.timeout = std::chrono::milliseconds(10'000);
    auto reply = client.request(request);
    if (!reply) {
        ADD_FAILURE() << "GET " << base_url << target << ": " << reply.error().describe();
        return {};
    }
    EXPECT_EQ(reply->status, 200) << "GET " << base_url << target << ": " << reply->body;
    return reply->body;
}

}  // namespace zeus::testing
