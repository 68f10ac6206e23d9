#include "zeusd_backend/fake_zeusd.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <atomic>
#include <cstring>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;  // NOLINT: posix_spawn passes our environment on

namespace zeus::testing {
namespace {

std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

nlohmann::json FakeZeusd::default_config() {
    return {
        {"gpus",
         {{{"id", 0}, {"name", "NVIDIA A100-SXM4-40GB"}, {"pci_address", "0000:01:00.0"}, {"cumulative_energy_available", true}},
          {{"id", 1}, {"name", "NVIDIA A100-SXM4-40GB"}, {"pci_address", "0000:02:00.0"}, {"cumulative_energy_available", true}}}},
        {"cpus", {{{"id", 0}, {"dram_available", true}}, {{"id", 1}, {"dram_available", false}}}},
        {"enabled_api_groups", {"gpu-control", "gpu-read", "cpu-read"}},
        {"auth_required", false},
    };
}

FakeZeusd::FakeZeusd(const nlohmann::json& config, Listen listen) : listen_(listen) {
    static std::atomic<int> counter{0};
    // Short: a Unix socket path must fit in 108 bytes.
    dir_ = std::filesystem::temp_directory_path() /
           ("zfz-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    socket_ = dir_ / "zeusd.sock";
    log_ = dir_ / "requests.jsonl";
    const auto config_path = dir_ / "config.json";
    const auto ready = dir_ / "ready";
    const auto stderr_path = dir_ / "stderr";
    std::ofstream(config_path) << config.dump();
    std::ofstream(log_).flush();

    std::vector<std::string> args = {"/usr/bin/python3", ZEUS_TEST_FAKE_ZEUSD, "--config", config_path.string(),
                                     "--log",            log_.string(),         "--ready",  ready.string()};
    if (listen == Listen::UnixSocket) {
        args.insert(args.end(), {"--unix", socket_.string()});
    } else {
        args.emplace_back("--tcp");
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        ADD_FAILURE() << "could not start " << argv[0] << ": " << std::strerror(rc);
        pid_ = -1;
        return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!std::filesystem::exists(ready)) {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            ADD_FAILURE() << "fake zeusd exited at start-up: " << slurp(stderr_path);
            return;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            ADD_FAILURE() << "fake zeusd did not start in 20 s: " << slurp(stderr_path);
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (listen == Listen::Tcp) port_ = static_cast<std::uint16_t>(std::stoi(slurp(ready)));
}

FakeZeusd::~FakeZeusd() {
    if (pid_ > 0) {
        ::kill(pid_, SIGTERM);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

ZeusdConfig FakeZeusd::client_config(std::optional<std::string> token) const {
    if (listen_ == Listen::UnixSocket) return ZeusdConfig::unix_socket(socket_.string(), std::move(token));
    return ZeusdConfig::tcp("127.0.0.1", port_, std::move(token));
}

std::string FakeZeusd::environment() const {
    if (listen_ == Listen::UnixSocket) return "ZEUSD_SOCK_PATH=" + socket_.string();
    return "ZEUSD_HOST_PORT=127.0.0.1:" + std::to_string(port_);
}

std::vector<RecordedRequest> FakeZeusd::requests() const {
    std::vector<RecordedRequest> out;
    std::ifstream in(log_);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        const auto j = nlohmann::json::parse(line);
        RecordedRequest r;
        r.connection = j.at("connection").get<int>();
        r.method = j.at("method").get<std::string>();
        r.path = j.at("path").get<std::string>();
        r.query = j.at("query").get<std::string>();
        r.params = j.at("params").get<std::map<std::string, std::string>>();
        r.param_names = j.at("param_names").get<std::vector<std::string>>();
        r.headers = j.at("headers").get<std::map<std::string, std::string>>();
        r.body = j.at("body").get<std::string>();
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<RecordedRequest> FakeZeusd::requests(const std::string& path) const {
    std::vector<RecordedRequest> out;
    for (auto& r : requests()) {
        if (r.path == path) out.push_back(std::move(r));
    }
    return out;
}

void FakeZeusd::clear_requests() const { std::ofstream(log_, std::ios::trunc).flush(); }

}  // namespace zeus::testing
