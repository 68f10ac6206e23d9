// The daemon-backed device backends: GPUs read locally (the simulator) with
// settings relayed to the daemon by NVML index, and CPU energy read through
// the daemon. Measurement never needs gpu-control (unlike the original,
// zeus-inventory §12.1).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include "device/zeusd/fake_zeusd.hpp"
#include "support/sim_fixture.hpp"
#include "zeus/device/cpu.hpp"
#include "zeus/device/gpu_processes.hpp"
#include "zeus/device/gpus.hpp"

namespace zeus {
namespace {

using testing::FakeZeusd;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Four simulated GPUs whose own setters are refused (as for a non-root
// process on a real machine), and a daemon that lists the same four.
constexpr const char* kFourGpusNoPermission = R"({"gpus": [{"model": "A100-SXM4-40GB", "count": 4,
    "permissions": {"set_power_limit": false, "set_clocks": false, "set_persistence": false}}]})";

nlohmann::json four_gpu_daemon() {
    auto config = FakeZeusd::default_config();
    config["gpus"] = nlohmann::json::array();
    for (int i = 0; i < 4; ++i) {
        config["gpus"].push_back({{"id", i},
                                  {"name", "NVIDIA A100-SXM4-40GB"},
                                  {"pci_address", "0000:0" + std::to_string(i + 1) + ":00.0"},
                                  {"cumulative_energy_available", true}});
    }
    return config;
}

class ZeusdGpus : public testing::SimulatedGpus {};

TEST_F(ZeusdGpus, WithoutDaemonSettingsStayLocal) {
    configure(kFourGpusNoPermission);
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 4U);
    EXPECT_FALSE(gpus.backend_info().zeusd_endpoint.has_value());
    auto set = gpus[0].set_power_limit(Milliwatts(300'000));
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().code, ErrorCode::NoPermission);  // the simulator's NVML refused it
}

TEST_F(ZeusdGpus, ControlIsRelayedByNvmlIndexAndReadsStayLocal) {
    configure(kFourGpusNoPermission);
    FakeZeusd daemon(four_gpu_daemon());
    GpuOptions options = simulated("2,0");
    options.zeusd = daemon.client_config("tok");
    Gpus gpus = Gpus::open(options);
    ASSERT_EQ(gpus.size(), 2U) << gpus.status().error().describe();
    ASSERT_TRUE(gpus.backend_info().zeusd_endpoint.has_value());
    EXPECT_TRUE(gpus.backend_info().zeusd_control.ok());
    EXPECT_TRUE(gpus.warnings().empty());
    daemon.clear_requests();

    // Reads: the simulator, with no request to the daemon.
    auto energy = gpus[0].total_energy();
    ASSERT_TRUE(energy.ok()) << energy.error().describe();
    ASSERT_TRUE(gpus[0].instant_power().ok());
    ASSERT_TRUE(gpus[0].temperature().ok());
    auto before = gpus[0].power_limit();
    ASSERT_TRUE(before.ok());
    auto range = gpus[0].power_limit_constraints();
    ASSERT_TRUE(range.ok());
    EXPECT_TRUE(daemon.requests().empty());

    // Control: Zeus GPU 0 is NVML GPU 2 (CUDA_VISIBLE_DEVICES=2,0).
    const Milliwatts target = range->min;
    ASSERT_TRUE(gpus[0].set_power_limit(target).ok());
    ASSERT_TRUE(gpus[1].set_gpu_locked_clocks(Megahertz(1000), Megahertz(1410)).ok());
    ASSERT_TRUE(gpus[1].set_memory_locked_clocks(Megahertz(1215), Megahertz(1215)).ok());
    ASSERT_TRUE(gpus[0].reset_gpu_locked_clocks().ok());
    ASSERT_TRUE(gpus[0].reset_memory_locked_clocks().ok());
    ASSERT_TRUE(gpus[0].reset_locked_clocks().ok());
    ASSERT_TRUE(gpus[1].set_persistence_mode(true).ok());
    ASSERT_TRUE(gpus[0].reset_power_limit().ok());
    ASSERT_TRUE(gpus[1].check_power_limit_control().ok());

    const auto default_limit = gpus[0].default_power_limit();
    const auto current_1 = gpus[1].power_limit();
    ASSERT_TRUE(default_limit.ok());
    ASSERT_TRUE(current_1.ok());
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"/gpu/set_power_limit", fmt::format("gpu_ids=2&power_limit_mw={}&block=true", target.count())},
        {"/gpu/set_gpu_locked_clocks", "gpu_ids=0&min_clock_mhz=1000&max_clock_mhz=1410&block=true"},
        {"/gpu/set_mem_locked_clocks", "gpu_ids=0&min_clock_mhz=1215&max_clock_mhz=1215&block=true"},
        {"/gpu/reset_gpu_locked_clocks", "gpu_ids=2&block=true"},
        {"/gpu/reset_mem_locked_clocks", "gpu_ids=2&block=true"},
        {"/gpu/reset_locked_clocks", "gpu_ids=2&block=true"},
        {"/gpu/set_persistence_mode", "gpu_ids=0&enabled=true&block=true"},
        {"/gpu/set_power_limit", fmt::format("gpu_ids=2&power_limit_mw={}&block=true", default_limit->count())},
        {"/gpu/set_power_limit", fmt::format("gpu_ids=0&power_limit_mw={}&block=true", current_1->count())},
    };
    const auto requests = daemon.requests();
    ASSERT_EQ(requests.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(requests[i].method, "POST");
        EXPECT_EQ(requests[i].path, expected[i].first) << i;
        EXPECT_EQ(requests[i].query, expected[i].second) << i;
        EXPECT_EQ(requests[i].headers.at("authorization"), "Bearer tok");
    }
    // The fake daemon changes nothing on the simulator: the local limit is untouched.
    EXPECT_EQ(*gpus[0].power_limit(), *before);
}

TEST_F(ZeusdGpus, TheLocalGpusProcessesPassThrough) {
    configure(kFourGpusNoPermission);
    FakeZeusd daemon(four_gpu_daemon());
    GpuOptions options = simulated();
    options.zeusd = daemon.client_config();
    Gpus gpus = Gpus::open(options);
    ASSERT_EQ(gpus.size(), 4U);
    ASSERT_TRUE(gpus.backend_info().zeusd_endpoint.has_value());
    int load = 0;
    ASSERT_EQ(zeusSimProcessLoadBegin(2, 0.5, 4242, 1.0, &load), ZEUS_SIM_OK) << zeusSimLastError();
    const auto processes = running_compute_processes(gpus[2]);
    ASSERT_TRUE(processes.ok()) << processes.error().describe();
    ASSERT_EQ(processes->size(), 1U);
    EXPECT_EQ(processes->front().pid, 4242U);
    EXPECT_TRUE(running_compute_processes(gpus[0]).value().empty());
    // Answered by the local NVML, not refused as a backend without process data.
    const auto samples = process_utilization(gpus[2], 0);
    EXPECT_TRUE(samples.ok() || samples.error().code == ErrorCode::NotFound) << samples.error().describe();
    EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

TEST_F(ZeusdGpus, OutOfRangeLimitIsRefusedBeforeTheDaemon) {
    configure(kFourGpusNoPermission);
    FakeZeusd daemon(four_gpu_daemon());
    GpuOptions options = simulated();
    options.zeusd = daemon.client_config();
    Gpus gpus = Gpus::open(options);
    ASSERT_EQ(gpus.size(), 4U);
    daemon.clear_requests();
    auto set = gpus[3].set_power_limit(Milliwatts(5'000));
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().code, ErrorCode::InvalidArgument);
    EXPECT_TRUE(contains(set.error().message, "outside GPU 3's range")) << set.error().message;
    EXPECT_FALSE(gpus[3].set_gpu_locked_clocks(Megahertz(1500), Megahertz(1000)).ok());
    EXPECT_TRUE(daemon.requests().empty());
}

TEST_F(ZeusdGpus, MeasurementWorksWithoutGpuControlScope) {
    configure(kFourGpusNoPermission);
    auto config = four_gpu_daemon();
    config["auth_required"] = true;
    config["tokens"] = {{"reader", {{"sub", "alice"}, {"scopes", {"gpu-read", "cpu-read"}}}}};
    FakeZeusd daemon(config);
    GpuOptions options = simulated();
    options.zeusd = daemon.client_config("reader");
    Gpus gpus = Gpus::open(options);
    // Every GPU is there and measurable (the original would have none, §12.1).
    ASSERT_EQ(gpus.size(), 4U);
    EXPECT_TRUE(gpus.status().ok());
    for (const auto& gpu : gpus) {
        EXPECT_TRUE(gpu->available());
        EXPECT_TRUE(gpu->total_energy().ok());
        EXPECT_TRUE(gpu->instant_power().ok());
    }
    ASSERT_FALSE(gpus.backend_info().zeusd_control.ok());
    ASSERT_EQ(gpus.warnings().size(), 1U);
    EXPECT_TRUE(contains(gpus.warnings()[0], "reads are local and unaffected")) << gpus.warnings()[0];

    daemon.clear_requests();
    auto set = gpus[1].set_power_limit(Milliwatts(300'000));
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().code, ErrorCode::NoPermission);
    EXPECT_TRUE(contains(set.error().message, "GPU 1 (NVML/daemon index 1): cannot set the power limit"))
        << set.error().message;
    EXPECT_TRUE(contains(set.error().message, "user 'alice' lacks scope gpu-control")) << set.error().message;
    EXPECT_TRUE(contains(set.error().hint, "zeusd token issue --scope gpu-control")) << set.error().hint;
    EXPECT_FALSE(gpus[0].set_persistence_mode(true).ok());
    EXPECT_FALSE(gpus[0].reset_locked_clocks().ok());
    EXPECT_TRUE(daemon.requests().empty());  // refused locally: the daemon would say 403 anyway
}

TEST_F(ZeusdGpus, UnreachableDaemonLeavesReadsWorking) {
    configure(kFourGpusNoPermission);
    GpuOptions options = simulated();
    options.zeusd = ZeusdConfig::unix_socket((dir_ / "no-daemon.sock").string());
    Gpus gpus = Gpus::open(options);
    ASSERT_EQ(gpus.size(), 4U);
    EXPECT_TRUE(gpus[0].total_energy().ok());
    ASSERT_EQ(gpus.warnings().size(), 1U);
    EXPECT_TRUE(contains(gpus.warnings()[0], "could not reach zeusd")) << gpus.warnings()[0];
    auto set = gpus[0].set_power_limit(Milliwatts(300'000));
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().code, ErrorCode::Unavailable);
    EXPECT_TRUE(contains(set.error().hint, "ZEUSD_SOCK_PATH")) << set.error().hint;
}

TEST_F(ZeusdGpus, GpuTheDaemonDoesNotListCannotBeControlled) {
    configure(kFourGpusNoPermission);
    auto config = four_gpu_daemon();
    config["gpus"].erase(3);
    FakeZeusd daemon(config);
    GpuOptions options = simulated();
    options.zeusd = daemon.client_config();
    Gpus gpus = Gpus::open(options);
    ASSERT_EQ(gpus.size(), 4U);
    EXPECT_TRUE(gpus[2].set_persistence_mode(true).ok());
    auto set = gpus[3].set_persistence_mode(true);
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().code, ErrorCode::NotFound);
    EXPECT_TRUE(contains(set.error().message, "GPU 3 not on the daemon (it has GPUs: 0, 1, 2)")) << set.error().message;
}

TEST(ZeusdCpus, EnergyComesFromTheDaemonInJoules) {
    FakeZeusd daemon;
    CpuOptions options;
    options.powercap_root = "/nonexistent";  // never looked at with a daemon
    options.zeusd = daemon.client_config();
    Cpus cpus = Cpus::open(options);
    ASSERT_TRUE(cpus.status().ok()) << cpus.status().error().describe();
    ASSERT_EQ(cpus.size(), 2U);
    EXPECT_TRUE(cpus.warnings().empty());
    EXPECT_EQ(cpus[0].identity().zone_index, 0U);
    EXPECT_EQ(cpus[1].identity().zone_name, "package-1");
    EXPECT_TRUE(contains(cpus[0].identity().path, "zeusd unix:")) << cpus[0].identity().path;
    EXPECT_TRUE(cpus[0].has_dram());
    EXPECT_FALSE(cpus[1].has_dram());
    EXPECT_EQ(cpus[1].dram_status().error().code, ErrorCode::NotSupported);
    EXPECT_FALSE(cpus.sample_period().has_value());  // the daemon keeps its counters wrap-free

    // The baseline was one request for all; the fake adds 2 J (package) and
    // 0.3 J (DRAM) per read.
    const auto opening = daemon.requests("/cpu/get_cumulative_energy");
    ASSERT_EQ(opening.size(), 1U);
    EXPECT_EQ(opening[0].query, "cpu=true&dram=true");
    daemon.clear_requests();

    auto energy = cpus[0].total_energy();
    ASSERT_TRUE(energy.ok()) << energy.error().describe();
    EXPECT_DOUBLE_EQ(energy->package.count(), 2.0);
    ASSERT_TRUE(energy->dram.has_value());
    EXPECT_DOUBLE_EQ(energy->dram->count(), 0.3);
    EXPECT_TRUE(energy->exact());
    auto no_dram = cpus[1].total_energy();
    ASSERT_TRUE(no_dram.ok()) << no_dram.error().describe();
    EXPECT_FALSE(no_dram->dram.has_value());
    auto package = cpus[0].package_energy();
    ASSERT_TRUE(package.ok());
    EXPECT_DOUBLE_EQ(package->count(), 4.0);
    auto dram = cpus[0].dram_energy();
    ASSERT_TRUE(dram.ok());
    EXPECT_DOUBLE_EQ(dram->count(), 0.9);
    EXPECT_FALSE(cpus[1].dram_energy().ok());
    auto accumulated = cpus[0].accumulated();  // no request
    ASSERT_TRUE(accumulated.ok());
    EXPECT_DOUBLE_EQ(accumulated->package.count(), 4.0);

    const auto requests = daemon.requests();
    ASSERT_EQ(requests.size(), 4U);
    EXPECT_EQ(requests[0].query, "cpu=true&dram=true&cpu_ids=0");
    EXPECT_EQ(requests[1].query, "cpu=true&dram=false&cpu_ids=1");
    EXPECT_EQ(requests[2].query, "cpu=true&dram=false&cpu_ids=0");
    EXPECT_EQ(requests[3].query, "cpu=false&dram=true&cpu_ids=0");
}

TEST(ZeusdCpus, WithoutCpuReadTheSetIsEmptyAndSaysWhy) {
    auto config = FakeZeusd::default_config();
    config["auth_required"] = true;
    config["tokens"] = {{"gpu-only", {{"sub", "carol"}, {"scopes", {"gpu-read"}}}}};
    FakeZeusd daemon(config);
    CpuOptions options;
    options.zeusd = daemon.client_config("gpu-only");
    Cpus cpus = Cpus::open(options);
    EXPECT_TRUE(cpus.empty());
    ASSERT_FALSE(cpus.status().ok());
    EXPECT_EQ(cpus.status().error().code, ErrorCode::NoPermission);
    EXPECT_TRUE(contains(cpus.status().error().message, "CPU energy is read through zeusd here")) << cpus.status().error().message;
    EXPECT_TRUE(contains(cpus.status().error().message, "lacks scope cpu-read")) << cpus.status().error().message;
    EXPECT_TRUE(contains(cpus.status().error().hint, "--scope cpu-read")) << cpus.status().error().hint;

    config["auth_required"] = false;
    config["enabled_api_groups"] = {"gpu-read", "gpu-control"};
    FakeZeusd no_cpu_group(config);
    options.zeusd = no_cpu_group.client_config();
    cpus = Cpus::open(options);
    ASSERT_FALSE(cpus.status().ok());
    EXPECT_TRUE(contains(cpus.status().error().hint, "--enable cpu-read")) << cpus.status().error().hint;

    options.zeusd = ZeusdConfig::unix_socket("/nonexistent/zeusd.sock");
    cpus = Cpus::open(options);
    ASSERT_FALSE(cpus.status().ok());
    EXPECT_EQ(cpus.status().error().code, ErrorCode::Unavailable);
}

TEST(ZeusdCpus, DaemonRestartIsACountedResetNotNegativeEnergy) {
    auto config = FakeZeusd::default_config();
    config["cpu_start_uj"] = {{"cpu", 50'000'000'000LL}, {"dram", 1'000'000}};
    config["cpu_restart_at_read"] = 2;  // the second request sees counters started over, as after a restart
    FakeZeusd daemon(config);
    CpuOptions options;
    options.zeusd = daemon.client_config();
    Cpus cpus = Cpus::open(options);
    ASSERT_EQ(cpus.size(), 2U);
    auto energy = cpus[0].total_energy();
    ASSERT_TRUE(energy.ok()) << energy.error().describe();
    EXPECT_GE(energy->package.count(), 0.0);
    EXPECT_EQ(energy->package_stats.resets, 1U);
    EXPECT_FALSE(energy->exact());
}

}  // namespace
}  // namespace zeus
