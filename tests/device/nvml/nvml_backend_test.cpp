// The product's NVML backend driven through the GPU simulator: the same code
// path as on a real GPU, with faults injected by the simulator.
#include <gtest/gtest.h>

#include <cmath>
#include <cctype>

#include "support/sim_fixture.hpp"
#include "support/build_paths.hpp"

namespace zeus {
namespace {

using testing::SimulatedGpus;

constexpr const char* kVirtualA100x2 = R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB", "count": 2}]})";

TEST_F(SimulatedGpus, DefaultSimulatorHasTwoA100s) {
    Gpus gpus = Gpus::open(simulated());
    ASSERT_TRUE(gpus.status().ok()) << gpus.status().error().describe();
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_TRUE(gpus.backend_info().simulated);
    EXPECT_EQ(gpus.backend_info().backend, "nvml");
    EXPECT_FALSE(gpus.backend_info().driver_version.empty());
    auto looks_like_uuid = [](const std::string& u) {  // GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
        if (u.size() != 40 || u.rfind("GPU-", 0) != 0) return false;
        for (std::size_t i = 4; i < u.size(); ++i) {
            const bool dash = i == 12 || i == 17 || i == 22 || i == 27;
            if (dash ? u[i] != '-' : std::isxdigit(static_cast<unsigned char>(u[i])) == 0) return false;
        }
        return true;
    };
    for (unsigned i = 0; i < 2; ++i) {
        const GpuIdentity& id = gpus[i].identity();
        EXPECT_EQ(id.index, i);
        EXPECT_EQ(id.physical_index, i);
        EXPECT_NE(id.name.find("A100"), std::string::npos) << id.name;
        EXPECT_TRUE(looks_like_uuid(id.uuid)) << id.uuid;
        EXPECT_FALSE(id.pci_bus_id.empty());
        EXPECT_EQ(id.architecture, GpuArchitecture::Ampere);
        const GpuCapabilities& caps = gpus[i].capabilities();
        EXPECT_TRUE(caps.energy_counter.supported) << caps.energy_counter.reason;
        EXPECT_TRUE(caps.instant_power.support.supported) << caps.instant_power.support.reason;
        EXPECT_EQ(caps.instant_power.scope, PowerScope::Gpu);
        EXPECT_TRUE(caps.power_limit.supported);
    }
    EXPECT_NE(gpus[0].identity().uuid, gpus[1].identity().uuid);
}

TEST_F(SimulatedGpus, EnergyCounterTracksGroundTruthUnderLoad) {
    configure(kVirtualA100x2);
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 2U);
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK) << zeusSimLastError();
    advance(0.5);  // settle past one counter refresh

    const Millijoules start = gpus[0].total_energy().value();
    const double truth_start = truth(0);
    double max_power_w = 0;
    for (int step = 0; step < 40; ++step) {  // 2 s in 50 ms steps
        advance(0.05);
        double p = 0;
        ASSERT_EQ(zeusSimTruePower(0, &p), ZEUS_SIM_OK);
        max_power_w = std::max(max_power_w, p);
    }
    const Joules measured = quantity_cast<Joules>(gpus[0].total_energy().value() - start);
    const double expected = truth(0) - truth_start;
    ASSERT_GT(expected, 0.0);
    // The counter shows the energy at its last refresh (every 100 ms): each end
    // of the window can lag by at most one refresh period of energy, + 1 mJ rounding.
    const double bound = 2 * max_power_w * 0.100 + 0.002;
    EXPECT_NEAR(measured.count(), expected, bound);
    // The loaded GPU used clearly more than the idle one.
    EXPECT_GT(gpus[0].instant_power().value().power, gpus[1].instant_power().value().power);
    EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

TEST_F(SimulatedGpus, PowerReadingsCarryTheirRefreshTime) {
    configure(kVirtualA100x2);  // A100: the power sensor refreshes every 100 ms
    Gpus gpus = Gpus::open(simulated());
    advance(0.3);
    auto first = gpus[0].instant_power();
    ASSERT_TRUE(first.ok()) << first.error().describe();
    EXPECT_GT(first->power.count(), 0);
    ASSERT_TRUE(first->refreshed_at.has_value());
    advance(0.01);  // inside the same refresh period: same sample
    EXPECT_EQ(gpus[0].instant_power().value().refreshed_at, first->refreshed_at);
    advance(0.1);  // one period later: the next sample, 100 ms newer
    const auto next = gpus[0].instant_power().value().refreshed_at;
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(*next - *first->refreshed_at).count(), 100);
}

TEST_F(SimulatedGpus, PreVoltaGpuHasNoEnergyCounterButHasPower) {
    configure(R"({"gpus": [{"model": "P100-PCIE-16GB"}, {"model": "V100-SXM2-16GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_EQ(gpus[0].identity().architecture, GpuArchitecture::Pascal);
    EXPECT_FALSE(gpus[0].capabilities().energy_counter.supported);
    EXPECT_NE(gpus[0].capabilities().energy_counter.reason.find("Volta"), std::string::npos);
    auto energy = gpus[0].total_energy();
    ASSERT_FALSE(energy.ok());
    EXPECT_EQ(energy.error().code, ErrorCode::NotSupported);
    EXPECT_TRUE(gpus[0].instant_power().ok());
    EXPECT_TRUE(gpus[1].capabilities().energy_counter.supported);
    EXPECT_TRUE(gpus[1].total_energy().ok());
}

TEST_F(SimulatedGpus, EnergyNotSupportedFaultOnAVoltaModel) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB", "faults": {"energy_not_supported": true}}]})");
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 1U);
    EXPECT_FALSE(gpus[0].capabilities().energy_counter.supported);
    EXPECT_NE(gpus[0].capabilities().energy_counter.reason.find("Not Supported"), std::string::npos)
        << gpus[0].capabilities().energy_counter.reason;
    EXPECT_EQ(gpus[0].total_energy().error().code, ErrorCode::NotSupported);
}

TEST_F(SimulatedGpus, OneGpuFailingToInitialiseDoesNotHideTheOthers) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"},
                           {"model": "A100-SXM4-40GB", "faults": {"init_error": "GPU_IS_LOST"}},
                           {"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    ASSERT_TRUE(gpus.status().ok());
    ASSERT_EQ(gpus.size(), 3U);
    EXPECT_TRUE(gpus[0].available());
    EXPECT_TRUE(gpus[2].available());
    ASSERT_FALSE(gpus[1].available());
    EXPECT_EQ(gpus[1].status().error().code, ErrorCode::GpuLost);
    EXPECT_NE(gpus[1].status().error().hint.find("reset"), std::string::npos);
    EXPECT_EQ(gpus[1].total_energy().error().code, ErrorCode::GpuLost);
    EXPECT_TRUE(gpus[0].total_energy().ok());
    EXPECT_TRUE(gpus[2].total_energy().ok());
    EXPECT_EQ(gpus[2].identity().physical_index, 2U);
}

TEST_F(SimulatedGpus, CounterResetIsFlaggedAndNeverADrop) {
    configure(kVirtualA100x2);
    Gpus gpus = Gpus::open(simulated());
    advance(5.0);
    const Millijoules before = gpus[0].total_energy().value();
    ASSERT_GT(before.count(), 0);
    ASSERT_TRUE(gpus[0].energy_counter_stats()->exact());
    const double truth_before = truth(0);
    ASSERT_EQ(zeusSimInjectFault(0, "counter_reset", 0), ZEUS_SIM_OK) << zeusSimLastError();
    advance(0.5);
    const Millijoules after = gpus[0].total_energy().value();
    // The raw counter dropped to ~0; the accumulated total keeps counting the
    // energy since the restart (what happened before the restart since the
    // last read is unknown, so the total may fall short, never go back).
    EXPECT_GE(after, before);
    const double since_reset_j = truth(0) - truth_before;
    EXPECT_LE(quantity_cast<Joules>(after - before).count(), since_reset_j + 0.001);
    const auto stats = gpus[0].energy_counter_stats();
    ASSERT_TRUE(stats.has_value());
    EXPECT_EQ(stats->resets, 1U);
    EXPECT_FALSE(stats->exact());
    EXPECT_TRUE(gpus[1].energy_counter_stats()->exact());  // the other GPU is untouched
}

TEST_F(SimulatedGpus, GpuLostAtRunTimeGivesTypedErrors) {
    configure(kVirtualA100x2);
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(zeusSimInjectFault(1, "lost", 1), ZEUS_SIM_OK);
    auto energy = gpus[1].total_energy();
    ASSERT_FALSE(energy.ok());
    EXPECT_EQ(energy.error().code, ErrorCode::GpuLost);
    EXPECT_EQ(energy.error().vendor_code, 15);
    EXPECT_NE(energy.error().message.find("GPU 1"), std::string::npos) << energy.error().message;
    EXPECT_TRUE(gpus[0].total_energy().ok());
}

TEST_F(SimulatedGpus, PermissionDeniedOnSettersCarriesTheFix) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB",
                            "permissions": {"set_power_limit": false, "set_clocks": false, "set_persistence": false}}]})");
    Gpus gpus = Gpus::open(simulated());
    Gpu& gpu = gpus[0];
    const auto range = gpu.power_limit_constraints().value();
    auto set = gpu.set_power_limit(range.min);
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().code, ErrorCode::NoPermission);
    EXPECT_NE(set.error().hint.find("root"), std::string::npos);
    EXPECT_EQ(gpu.check_power_limit_control().error().code, ErrorCode::NoPermission);
    EXPECT_EQ(gpu.set_gpu_locked_clocks(Megahertz(1000), Megahertz(1200)).error().code, ErrorCode::NoPermission);
    EXPECT_EQ(gpu.set_persistence_mode(true).error().code, ErrorCode::NoPermission);
    // Reads still work and nothing changed.
    EXPECT_EQ(gpu.power_limit().value(), gpu.default_power_limit().value());
}

TEST_F(SimulatedGpus, PowerLimitSetReadBackAndReset) {
    configure(kVirtualA100x2);
    Gpus gpus = Gpus::open(simulated());
    Gpu& gpu = gpus[0];
    const auto range = gpu.power_limit_constraints().value();
    ASSERT_LT(range.min, range.max);
    const Milliwatts middle((range.min.count() + range.max.count()) / 2);
    ASSERT_TRUE(gpu.check_power_limit_control().ok());
    ASSERT_TRUE(gpu.set_power_limit(middle).ok());
    EXPECT_EQ(gpu.power_limit().value(), middle);
    EXPECT_EQ(gpus[1].power_limit().value(), gpus[1].default_power_limit().value());  // only GPU 0 changed

    auto too_low = gpu.set_power_limit(range.min - Milliwatts(1000));
    ASSERT_FALSE(too_low.ok());
    EXPECT_EQ(too_low.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(too_low.error().message.find("outside"), std::string::npos);
    EXPECT_EQ(gpu.power_limit().value(), middle);

    ASSERT_TRUE(gpu.reset_power_limit().ok());
    EXPECT_EQ(gpu.power_limit().value(), gpu.default_power_limit().value());
}

TEST_F(SimulatedGpus, LowerPowerLimitThrottlesTheSimulatedGpu) {
    configure(kVirtualA100x2);
    Gpus gpus = Gpus::open(simulated());
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK);
    advance(1.0);
    double full = 0;
    ASSERT_EQ(zeusSimTruePower(0, &full), ZEUS_SIM_OK);
    const Milliwatts min = gpus[0].power_limit_constraints().value().min;
    ASSERT_GT(full, quantity_cast<Watts>(min).count()) << "the full load must exceed the lowest limit";
    ASSERT_TRUE(gpus[0].set_power_limit(min).ok());
    advance(1.0);
    const Watts capped = quantity_cast<Watts>(gpus[0].instant_power().value().power);
    EXPECT_LE(capped.count(), quantity_cast<Watts>(min).count() * 1.02 + 1.0);
    ASSERT_TRUE(gpus[0].reset_power_limit().ok());
}

TEST_F(SimulatedGpus, ClocksListLockAndReset) {
    configure(kVirtualA100x2);
    Gpus gpus = Gpus::open(simulated());
    Gpu& gpu = gpus[0];
    auto memory = gpu.supported_memory_clocks();
    ASSERT_TRUE(memory.ok()) << memory.error().describe();
    ASSERT_FALSE(memory->empty());
    auto graphics = gpu.supported_graphics_clocks();
    ASSERT_TRUE(graphics.ok()) << graphics.error().describe();
    ASSERT_GT(graphics->size(), 2U);
    const auto [lo, hi] = std::minmax_element(graphics->begin(), graphics->end());
    ASSERT_TRUE(gpu.set_gpu_locked_clocks(*lo, *lo).ok());
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK);
    advance(0.5);
    double mhz = 0;
    ASSERT_EQ(zeusSimClockMhz(0, &mhz), ZEUS_SIM_OK);
    EXPECT_NEAR(mhz, static_cast<double>(lo->count()), 1.0);
    ASSERT_TRUE(gpu.reset_locked_clocks().ok());
    advance(0.5);
    ASSERT_EQ(zeusSimClockMhz(0, &mhz), ZEUS_SIM_OK);
    EXPECT_GT(mhz, static_cast<double>(lo->count()));
    EXPECT_LE(mhz, static_cast<double>(hi->count()) + 1.0);

    auto bad = gpu.set_gpu_locked_clocks(Megahertz(1500), Megahertz(1000));
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, ErrorCode::InvalidArgument);
}

TEST_F(SimulatedGpus, PersistenceModeRoundTrip) {
    Gpus gpus = Gpus::open(simulated());
    const bool before = gpus[0].persistence_mode().value();
    ASSERT_TRUE(gpus[0].set_persistence_mode(!before).ok());
    EXPECT_EQ(gpus[0].persistence_mode().value(), !before);
    ASSERT_TRUE(gpus[0].set_persistence_mode(before).ok());
}

TEST_F(SimulatedGpus, GraceHopperFallsBackToModuleScope) {
    configure(R"({"gpus": [{"model": "GH200"}, {"model": "H100-SXM5-80GB"}, {"model": "A40"}]})");
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 3U);
    const auto& gh = gpus[0].capabilities();
    ASSERT_TRUE(gh.instant_power.support.supported) << gh.instant_power.support.reason;
    EXPECT_EQ(gh.instant_power.scope, PowerScope::Module);
    EXPECT_TRUE(gpus[0].instant_power().ok());
    EXPECT_EQ(gpus[1].capabilities().instant_power.scope, PowerScope::Gpu);
    EXPECT_TRUE(gpus[1].capabilities().memory_power.support.supported);
    EXPECT_TRUE(gpus[1].memory_power().ok());
    EXPECT_FALSE(gpus[2].capabilities().memory_power.support.supported);
    EXPECT_EQ(gpus[2].memory_power().error().code, ErrorCode::NotSupported);
}

TEST_F(SimulatedGpus, OldDriverWithoutPowerFieldsFallsBackToPowerUsageOnVolta) {
    configure(R"({"clock": "virtual", "gpus": [{"model": "V100-SXM2-16GB",
                  "counters": {"scopes": {"gpu": false, "module": false}}}]})");
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 1U);
    ASSERT_TRUE(gpus[0].capabilities().instant_power.support.supported)
        << gpus[0].capabilities().instant_power.support.reason;
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK);
    advance(1.0);
    auto reading = gpus[0].instant_power();
    ASSERT_TRUE(reading.ok()) << reading.error().describe();
    double truth_w = 0;
    ASSERT_EQ(zeusSimTruePower(0, &truth_w), ZEUS_SIM_OK);
    // Steady load: the sensor's window mean equals the true power, up to noise.
    EXPECT_NEAR(quantity_cast<Watts>(reading->power).count(), truth_w, 0.05 * truth_w);
    EXPECT_FALSE(gpus[0].capabilities().average_power.support.supported);
}

TEST_F(SimulatedGpus, CudaVisibleDevicesSelectsAndReorders) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB", "count": 4}]})");
    {
        Gpus gpus = Gpus::open(simulated("3,1"));
        ASSERT_EQ(gpus.size(), 2U);
        EXPECT_EQ(gpus[0].identity().physical_index, 3U);
        EXPECT_EQ(gpus[0].identity().index, 0U);
        EXPECT_EQ(gpus[1].identity().physical_index, 1U);
    }
    std::string uuid2;
    {
        Gpus all = Gpus::open(simulated());
        uuid2 = all[2].identity().uuid;
    }
    {
        Gpus gpus = Gpus::open(simulated(uuid2.substr(0, 12)));
        ASSERT_EQ(gpus.size(), 1U);
        EXPECT_EQ(gpus[0].identity().physical_index, 2U);
    }
    {
        Gpus gpus = Gpus::open(simulated("MIG-GPU-abc/1/0"));
        EXPECT_TRUE(gpus.empty());
        ASSERT_FALSE(gpus.status().ok());
        EXPECT_EQ(gpus.status().error().code, ErrorCode::InvalidConfig);
    }
    {
        Gpus gpus = Gpus::open(simulated(""));
        EXPECT_TRUE(gpus.empty());
        EXPECT_NE(gpus.status().error().message.find("hides all 4 GPUs"), std::string::npos);
    }
    {
        Gpus gpus = Gpus::open(simulated("0,9"));
        EXPECT_EQ(gpus.size(), 1U);
        ASSERT_EQ(gpus.warnings().size(), 1U);
    }
}

TEST_F(SimulatedGpus, IndexOutOfRangeNamesTheValidRange) {
    Gpus gpus = Gpus::open(simulated());
    auto missing = gpus.at(5);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
    EXPECT_NE(missing.error().message.find("0 to 1"), std::string::npos) << missing.error().message;
    EXPECT_THROW((void)gpus[5], ZeusError);
}

TEST_F(SimulatedGpus, DriverNotLoadedGivesAnEmptySetWithTheReason) {
    configure(R"({"driver_loaded": false})");
    Gpus gpus = Gpus::open(simulated());
    EXPECT_TRUE(gpus.empty());
    ASSERT_FALSE(gpus.status().ok());
    EXPECT_EQ(gpus.status().error().code, ErrorCode::DriverNotLoaded);
    EXPECT_NE(gpus.status().error().hint.find("nvidia-smi"), std::string::npos);
}

TEST_F(SimulatedGpus, SimulatorLoadedByPathIsStillLabelledSimulated) {
    GpuOptions options;
    options.nvml_library = zeus::testing::sim_nvml_library_path();  // not through --simulate
    Gpus gpus = Gpus::open(options);
    ASSERT_FALSE(gpus.empty());
    EXPECT_TRUE(gpus.backend_info().simulated);
}

TEST(GpusWithoutSimulator, MissingLibraryIsAnExplicitStateNotACrash) {
    GpuOptions options;
    options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    Gpus gpus = Gpus::open(options);
    EXPECT_TRUE(gpus.empty());
    EXPECT_FALSE(gpus.backend_info().simulated);
    ASSERT_FALSE(gpus.status().ok());
    EXPECT_EQ(gpus.status().error().code, ErrorCode::LibraryNotFound);
    EXPECT_NE(gpus.status().error().hint.find("--simulate"), std::string::npos);
}

TEST(GpusWithoutSimulator, ALibraryThatIsNotNvmlIsRejected) {
    GpuOptions options;
    options.nvml_library = "libm.so.6";
    Gpus gpus = Gpus::open(options);
    EXPECT_TRUE(gpus.empty());
    EXPECT_EQ(gpus.status().error().code, ErrorCode::FunctionNotFound);
}

TEST(GpusWithoutSimulator, MissingSimulatorLibraryIsReported) {
    GpuOptions options;
    options.simulate = true;
    options.simulator_library = "/nonexistent/zeus-sim/libnvidia-ml.so.1";
    Gpus gpus = Gpus::open(options);
    EXPECT_TRUE(gpus.empty());
    EXPECT_TRUE(gpus.backend_info().simulated);
    EXPECT_EQ(gpus.status().error().code, ErrorCode::LibraryNotFound);
}

}  // namespace
}  // namespace zeus
