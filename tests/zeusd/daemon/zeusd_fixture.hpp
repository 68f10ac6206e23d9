// A fresh zeusd for each test: its own simulator state (shared with the
// test through ZEUS_SIM_STATE, so the test reads the same GPUs through the
// product's NVML backend), its own fake powercap tree and its own socket.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "device/cpu/fake_powercap.hpp"
#include "zeus/device/gpu_processes.hpp"
#include "zeus/device/gpus.hpp"
#include "zeusd_harness.hpp"
#include "support/build_paths.hpp"

namespace zeus::testing {

class ZeusdTest : public ::testing::Test {
  protected:
    // Package counter at daemon start, and its range.
    static constexpr std::uint64_t kPackageStartUj = 5'000'000;
    static constexpr std::uint64_t kDramStartUj = 700'000;
    static constexpr std::uint64_t kRangeUj = 262'143'328'850;

    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("zeusd-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
        ::setenv("ZEUS_SIM_STATE", (dir_ / "sim-state").c_str(), 1);
        ::unsetenv("ZEUS_SIM_CONFIG");
        ::unsetenv("CUDA_VISIBLE_DEVICES");
        ::unsetenv("ZEUSD_SOCK_PATH");
        ::unsetenv("ZEUSD_HOST_PORT");
        package_ = powercap_.add_zone(0, "package-0", kPackageStartUj, kRangeUj);
        dram_ = powercap_.add_subzone(0, 0, kDramStartUj, kRangeUj);
        endpoint_.unix_path = (dir_ / "zeusd.sock").string();
    }

    void TearDown() override {
        daemon_.reset();
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }

    std::map<std::string, std::string> daemon_env() const {
        return {{"ZEUS_SIMULATE", "1"},
                {"ZEUS_SIM_LIBRARY", zeus::testing::sim_nvml_library_path()},
                {"ZEUS_POWERCAP_ROOT", powercap_.root().string()},
                {"RUST_LOG", "debug"}};
    }

    // zeusd serve on this test's socket with `extra` flags.
    void start(std::vector<std::string> extra = {}, std::optional<unsigned long> fd_limit = std::nullopt) {
        std::vector<std::string> args = {"--socket-path", *endpoint_.unix_path};
        args.insert(args.end(), extra.begin(), extra.end());
        daemon_ = std::make_unique<ZeusdProcess>(args, daemon_env(), dir_ / "zeusd.log", endpoint_, fd_limit);
    }

    // zeusd serve on this test's socket as PID 1 of a PID namespace of its own,
    // as in a pod without hostPID: the test's processes have no pid there.
    void start_in_own_pid_namespace(std::vector<std::string> extra = {}) {
        std::vector<std::string> args = {"--socket-path", *endpoint_.unix_path};
        args.insert(args.end(), extra.begin(), extra.end());
        daemon_ = std::make_unique<ZeusdProcess>(args, daemon_env(), dir_ / "zeusd.log", endpoint_, std::nullopt,
                                                 /*own_pid_namespace=*/true);
    }

    // zeusd serve --mode tcp on `ip` ("127.0.0.1", "::1") port 0 with `extra`
    // flags: the kernel picks a free port and zeusd's log names it; get() and
    // post() go there.
    void start_tcp(const std::string& ip, std::vector<std::string> extra = {}) {
        const std::string host = ip.find(':') != std::string::npos ? "[" + ip + "]" : ip;
        std::vector<std::string> args = {"--mode", "tcp", "--tcp-bind-address", host + ":0"};
        args.insert(args.end(), extra.begin(), extra.end());
        Endpoint any_port;
        any_port.tcp_host = ip;
        daemon_ = std::make_unique<ZeusdProcess>(args, daemon_env(), dir_ / "zeusd.log", any_port);
        endpoint_ = *daemon_->endpoint();
    }

    HttpReply get(const std::string& target, const std::map<std::string, std::string>& headers = {}) const {
        return http_request(endpoint_, "GET", target, headers);
    }
    HttpReply post(const std::string& target, const std::map<std::string, std::string>& headers = {}) const {
        return http_request(endpoint_, "POST", target, headers);
    }
    static nlohmann::json json_of(const HttpReply& reply) { return nlohmann::json::parse(reply.body); }

  public:
    // The simulated GPUs as this process sees them (same state file as zeusd).
    static Gpus local_gpus() {
        GpuOptions options;
        options.simulate = true;
        options.simulator_library = zeus::testing::sim_nvml_library_path();
        return Gpus::open(options);
    }

    // Whether the simulator runs process `pid` on GPU `gpu` (the driver's list).
    static bool gpu_runs(unsigned gpu, pid_t pid) {
        const auto gpus = local_gpus();
        const auto processes = running_compute_processes(gpus[gpu]);
        return processes && std::any_of(processes->begin(), processes->end(), [pid](const GpuProcess& p) {
                   return p.pid == static_cast<std::uint32_t>(pid);
               });
    }

  protected:
    std::string log() const { return daemon_ ? daemon_->log() : std::string{}; }

    std::filesystem::path dir_;
    FakePowercap powercap_;
    std::filesystem::path package_;
    std::filesystem::path dram_;
    Endpoint endpoint_;
    std::unique_ptr<ZeusdProcess> daemon_;
};

}  // namespace zeus::testing
