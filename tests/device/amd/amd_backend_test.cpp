// The AMD SMI backend against the fake libamd_smi built in this folder
// (fake_amdsmi.cpp). Each test configures the fake through environment
// variables before opening, and reads its ground truth through the fake's
// fake_amdsmi_* control functions in the same loaded library.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "zeus/device/amd.hpp"
#include "zeus/platform/dynamic_library.hpp"
#include "support/build_paths.hpp"

namespace {

using namespace std::chrono_literals;
using zeus::ErrorCode;
using zeus::Gpus;
using zeus::Megahertz;
using zeus::Milliwatts;

constexpr auto kWindow = 150ms;  // validation window for most tests (the default 0.5 s is tested once)

class AmdBackend : public ::testing::Test {
  protected:
    void TearDown() override {
        for (const auto& name : set_) ::unsetenv(name.c_str());
    }
    void env(const std::string& name, const std::string& value) {
        ::setenv(name.c_str(), value.c_str(), 1);
        set_.push_back(name);
    }
    static zeus::GpuOptions options() {
        zeus::GpuOptions o;
        o.amdsmi_library = zeus::testing::fake_amdsmi_library_path();
        return o;
    }
    static Gpus open(const zeus::GpuOptions& o = options(), std::chrono::milliseconds window = kWindow) {
        return zeus::amd::open_gpus(o, zeus::amd::AmdOpenOptions{window});
    }
    // The fake's control functions (the library is already loaded by open()).
    struct Fake {
        zeus::DynamicLibrary lib;
        template <class Fn>
        Fn fn(const char* name) const {
            auto f = lib.function<Fn>(name);
            EXPECT_NE(f, nullptr) << name;
            return f;
        }
        [[nodiscard]] double true_mj(unsigned i) const {
            return fn<double (*)(unsigned)>("fake_amdsmi_true_energy_uj")(i) / 1000.0;
        }
        void set_power_w(unsigned i, double w) const { fn<void (*)(unsigned, double)>("fake_amdsmi_set_power_w")(i, w); }
        void reset_counter(unsigned i) const { fn<void (*)(unsigned)>("fake_amdsmi_reset_counter")(i); }
        [[nodiscard]] std::uint64_t power_cap_uw(unsigned i) const {
            return fn<std::uint64_t (*)(unsigned)>("fake_amdsmi_power_cap_uw")(i);
        }
        [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> clock_range(unsigned i, unsigned type) const {
            std::uint64_t lo = 0;
            std::uint64_t hi = 0;
            fn<void (*)(unsigned, unsigned, std::uint64_t*, std::uint64_t*)>("fake_amdsmi_clock_range")(i, type, &lo, &hi);
            return {lo, hi};
        }
        [[nodiscard]] unsigned perf_level(unsigned i) const {
            return fn<unsigned (*)(unsigned)>("fake_amdsmi_perf_level")(i);
        }
    };
    static Fake fake() { return Fake{zeus::DynamicLibrary::open(zeus::testing::fake_amdsmi_library_path()).value()}; }

    // The number after "ratio " in a reason.
    static double ratio_in(const std::string& reason) {
        const auto at = reason.find("ratio ");
        if (at == std::string::npos) return -1.0;
        return std::strtod(reason.c_str() + at + 6, nullptr);
    }

  private:
    std::vector<std::string> set_;
};

TEST_F(AmdBackend, EnumeratesGpusWithNamesAndIdentity) {
    env("FAKE_AMDSMI_GPUS", "3");
    env("FAKE_AMDSMI_NAME", "AMD Instinct MI300X,AMD Instinct MI300X,AMD Instinct MI210");
    Gpus gpus = open();
    ASSERT_TRUE(gpus.status().ok()) << gpus.status().error().describe();
    ASSERT_EQ(gpus.size(), 3U);
    EXPECT_EQ(gpus.backend_info().backend, "amdsmi");
    EXPECT_EQ(gpus.backend_info().library_path, zeus::testing::fake_amdsmi_library_path());
    EXPECT_EQ(gpus.backend_info().physical_gpu_count, 3U);
    EXPECT_EQ(gpus[0].identity().name, "AMD Instinct MI300X");
    EXPECT_EQ(gpus[2].identity().name, "AMD Instinct MI210");
    EXPECT_EQ(gpus[1].identity().pci_bus_id, "0000:d1:00.0");
    EXPECT_EQ(gpus[0].identity().uuid.substr(0, 3), "a0f");
    for (unsigned i = 0; i < 3; ++i) {
        EXPECT_TRUE(gpus[i].available());
        EXPECT_EQ(gpus[i].identity().index, i);
        EXPECT_EQ(gpus[i].identity().physical_index, i);
    }
    EXPECT_TRUE(gpus.warnings().empty());
}

TEST_F(AmdBackend, IndicesFollowHipIdsFromEnumerationInfo) {
    env("FAKE_AMDSMI_NAME", "first-in-amdsmi,second-in-amdsmi");
    env("FAKE_AMDSMI_HIP_IDS", "1,0");
    Gpus gpus = open();
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_EQ(gpus[0].identity().name, "second-in-amdsmi");  // HIP 0
    EXPECT_EQ(gpus[1].identity().name, "first-in-amdsmi");
    EXPECT_TRUE(gpus.warnings().empty());
}

TEST_F(AmdBackend, IndicesFollowKfdNodeOrderWithoutEnumerationInfo) {
    env("FAKE_AMDSMI_NAME", "first-in-amdsmi,second-in-amdsmi");
    env("FAKE_AMDSMI_HIP_IDS", "1,0");
    env("FAKE_AMDSMI_ENUMERATION", "kfd");
    Gpus gpus = open();
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_EQ(gpus[0].identity().name, "second-in-amdsmi");
    EXPECT_TRUE(gpus.warnings().empty());
}

TEST_F(AmdBackend, FallsBackToAmdSmiOrderWithAWarning) {
    env("FAKE_AMDSMI_NAME", "first-in-amdsmi,second-in-amdsmi");
    env("FAKE_AMDSMI_HIP_IDS", "1,0");
    env("FAKE_AMDSMI_ENUMERATION", "none");
    Gpus gpus = open();
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_EQ(gpus[0].identity().name, "first-in-amdsmi");
    ASSERT_EQ(gpus.warnings().size(), 1U);
    EXPECT_NE(gpus.warnings()[0].find("HIP numbering"), std::string::npos);
}

TEST_F(AmdBackend, HipVisibleDevicesSelectsAndReorders) {
    env("FAKE_AMDSMI_GPUS", "3");
    auto o = options();
    o.hip_visible_devices = "2,0";
    Gpus gpus = open(o);
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_EQ(gpus[0].identity().physical_index, 2U);
    EXPECT_EQ(gpus[0].identity().index, 0U);
    EXPECT_EQ(gpus[1].identity().physical_index, 0U);
}

TEST_F(AmdBackend, HipVisibleDevicesTakesPrecedenceOverCuda) {
    auto o = options();
    o.hip_visible_devices = "1";
    o.visible_devices = "0";
    Gpus gpus = open(o);
    ASSERT_EQ(gpus.size(), 1U);
    EXPECT_EQ(gpus[0].identity().physical_index, 1U);
}

TEST_F(AmdBackend, CudaVisibleDevicesAppliesWhenHipIsUnset) {
    auto o = options();
    o.visible_devices = "1";
    Gpus gpus = open(o);
    ASSERT_EQ(gpus.size(), 1U);
    EXPECT_EQ(gpus[0].identity().physical_index, 1U);
}

TEST_F(AmdBackend, VisibleDevicesAcceptUuidPrefixes) {
    auto o = options();
    o.hip_visible_devices = "GPU-a1f";
    Gpus gpus = open(o);
    ASSERT_EQ(gpus.size(), 1U);
    EXPECT_EQ(gpus[0].identity().physical_index, 1U);
}

TEST_F(AmdBackend, EmptyHipVisibleDevicesHidesEveryGpu) {
    auto o = options();
    o.hip_visible_devices = "";
    o.visible_devices = "0";
    Gpus gpus = open(o);
    EXPECT_TRUE(gpus.empty());
    ASSERT_FALSE(gpus.status().ok());
    EXPECT_NE(gpus.status().error().message.find("HIP_VISIBLE_DEVICES"), std::string::npos);
}

TEST_F(AmdBackend, MalformedHipVisibleDevicesNamesTheVariable) {
    auto o = options();
    o.hip_visible_devices = "0,abc";
    Gpus gpus = open(o);
    EXPECT_TRUE(gpus.empty());
    ASSERT_FALSE(gpus.status().ok());
    EXPECT_EQ(gpus.status().error().code, ErrorCode::InvalidConfig);
    EXPECT_NE(gpus.status().error().message.find("HIP_VISIBLE_DEVICES"), std::string::npos);
}

// --- Energy-counter validation (the acceptance criterion) ---

TEST_F(AmdBackend, ValidationAcceptsACorrectCounterInTheDefaultHalfSecond) {
    env("FAKE_AMDSMI_COUNTER", "correct");
    const auto start = std::chrono::steady_clock::now();
    Gpus gpus = zeus::amd::open_gpus(options());  // default window: 0.5 s, once for all GPUs
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_GE(took, 500ms);
    EXPECT_LT(took, 1500ms);
    for (const auto& gpu : gpus) {
        EXPECT_TRUE(gpu->capabilities().energy_counter.supported) << gpu->capabilities().energy_counter.reason;
        EXPECT_TRUE(gpu->total_energy().ok());
    }
}

TEST_F(AmdBackend, ValidationRejectsAStuckCounter) {
    env("FAKE_AMDSMI_COUNTER", "correct,stuck");
    Gpus gpus = open();
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_TRUE(gpus[0].capabilities().energy_counter.supported);
    const auto& cap = gpus[1].capabilities().energy_counter;
    EXPECT_FALSE(cap.supported);
    EXPECT_TRUE(cap.definitive);
    EXPECT_NE(cap.reason.find("inaccurate"), std::string::npos) << cap.reason;
    EXPECT_NE(cap.reason.find("200 W"), std::string::npos) << cap.reason;
    EXPECT_DOUBLE_EQ(ratio_in(cap.reason), 0.0) << cap.reason;
    auto energy = gpus[1].total_energy();
    ASSERT_FALSE(energy.ok());
    EXPECT_EQ(energy.error().code, ErrorCode::NotSupported);
    EXPECT_NE(energy.error().message.find("ratio"), std::string::npos);
}

TEST_F(AmdBackend, ValidationRejectsAMisScaledCounter) {
    env("FAKE_AMDSMI_COUNTER", "wrong_scale");
    Gpus gpus = open();
    ASSERT_EQ(gpus.size(), 2U);
    for (const auto& gpu : gpus) {
        const auto& cap = gpu->capabilities().energy_counter;
        EXPECT_FALSE(cap.supported);
        const double ratio = ratio_in(cap.reason);
        EXPECT_GT(ratio, 900.0) << cap.reason;
        EXPECT_LT(ratio, 1100.0) << cap.reason;
        EXPECT_NE(cap.reason.find("ROCm/amdsmi#38"), std::string::npos);
    }
}

TEST_F(AmdBackend, ZeroPowerLeavesTheCounterUnvalidated) {
    env("FAKE_AMDSMI_POWER_W", "0");
    Gpus gpus = open();
    ASSERT_EQ(gpus.size(), 2U);
    const auto& cap = gpus[0].capabilities().energy_counter;
    EXPECT_FALSE(cap.supported);
    EXPECT_NE(cap.reason.find("could not be validated"), std::string::npos) << cap.reason;
}

TEST_F(AmdBackend, UnsupportedCounterCarriesAmdSmisReason) {
    env("FAKE_AMDSMI_COUNTER", "unsupported");
    Gpus gpus = open();
    const auto& cap = gpus[0].capabilities().energy_counter;
    EXPECT_FALSE(cap.supported);
    EXPECT_NE(cap.reason.find("AMDSMI_STATUS_NOT_SUPPORTED"), std::string::npos) << cap.reason;
}

TEST_F(AmdBackend, EnergyTracksTheIntegratedPower) {
    env("FAKE_AMDSMI_POWER_W", "250,100");
    Gpus gpus = open();
    ASSERT_EQ(gpus.size(), 2U);
    Fake f = fake();
    for (unsigned i = 0; i < 2; ++i) ASSERT_TRUE(gpus[i].capabilities().energy_counter.supported);
    // Ground truth is read just before and just after each of our reads, so
    // the checks bracket our value whatever the scheduling delays.
    struct Bracketed {
        double before, after;
        double ours;
    };
    auto read = [&](unsigned i) {
        Bracketed b{f.true_mj(i), 0.0, 0.0};
        b.ours = static_cast<double>(gpus[i].total_energy().value().count());
        b.after = f.true_mj(i);
        return b;
    };
    const Bracketed start[2] = {read(0), read(1)};
    for (const auto& b : start) {  // counts from the driver's zero, like NVML
        EXPECT_GE(b.ours, b.before - 1.0);
        EXPECT_LE(b.ours, b.after + 1.0);
    }
    std::this_thread::sleep_for(150ms);
    f.set_power_w(0, 400.0);
    std::this_thread::sleep_for(150ms);
    for (unsigned i = 0; i < 2; ++i) {
        const Bracketed end = read(i);
        const double ours = end.ours - start[i].ours;
        EXPECT_GE(ours, end.before - start[i].after - 1.0) << "GPU " << i;
        EXPECT_LE(ours, end.after - start[i].before + 1.0) << "GPU " << i;
        EXPECT_GT(ours, 0.15 * (i == 0 ? 250.0 + 400.0 : 200.0) * 1000.0 * 0.99) << "GPU " << i;
    }
    auto stats = zeus::amd::energy_counter_stats(gpus[0]);
    ASSERT_TRUE(stats.has_value());
    EXPECT_TRUE(stats->exact());
    EXPECT_GE(stats->samples, 3U);
}

TEST_F(AmdBackend, ACounterResetIsFlaggedAndEnergyStaysMonotonic) {
    Gpus gpus = open();
    Fake f = fake();
    const auto before = gpus[0].total_energy().value();
    f.reset_counter(0);
    std::this_thread::sleep_for(20ms);
    const auto after = gpus[0].total_energy().value();
    EXPECT_GE(after, before);
    auto stats = zeus::amd::energy_counter_stats(gpus[0]);
    ASSERT_TRUE(stats.has_value());
    EXPECT_EQ(stats->resets, 1U);
}

TEST_F(AmdBackend, Abi24PowerLayoutIsRead) {
    env("FAKE_AMDSMI_ABI", "24");
    env("FAKE_AMDSMI_POWER_W", "321");
    Gpus gpus = open();
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_EQ(gpus[0].instant_power().value().power, Milliwatts(321000));
    EXPECT_EQ(gpus[0].average_power().value().power, Milliwatts(321000));
    EXPECT_TRUE(gpus[0].capabilities().energy_counter.supported);
}

TEST_F(AmdBackend, TooOldAbiIsRefusedAndNewerOneWarned) {
    env("FAKE_AMDSMI_ABI", "23");
    Gpus old = open();
    EXPECT_TRUE(old.empty());
    ASSERT_FALSE(old.status().ok());
    EXPECT_EQ(old.status().error().code, ErrorCode::NotSupported);
    EXPECT_NE(old.status().error().hint.find("ROCm"), std::string::npos);
}

TEST_F(AmdBackend, NewerAbiIsUsedWithAWarning) {
    env("FAKE_AMDSMI_ABI", "27");
    Gpus gpus = open();
    ASSERT_EQ(gpus.size(), 2U);
    ASSERT_FALSE(gpus.warnings().empty());
    EXPECT_NE(gpus.warnings()[0].find("AMD SMI 27"), std::string::npos);
    EXPECT_EQ(gpus[0].instant_power().value().power, Milliwatts(200000));
}

TEST_F(AmdBackend, PowerReadingsAndMissingAverage) {
    env("FAKE_AMDSMI_NO_AVERAGE", "1");
    env("FAKE_AMDSMI_POWER_W", "180");
    Gpus gpus = open();
    EXPECT_EQ(gpus[0].instant_power().value().power, Milliwatts(180000));
    EXPECT_FALSE(gpus[0].capabilities().average_power.support.supported);
    auto avg = gpus[0].average_power();
    ASSERT_FALSE(avg.ok());
    EXPECT_EQ(avg.error().code, ErrorCode::NotSupported);
    // Validation falls back to instant power, as the original.
    EXPECT_TRUE(gpus[0].capabilities().energy_counter.supported);
    EXPECT_EQ(gpus[0].temperature().value(), zeus::Celsius(65.0));
}

// --- Power limits: AMD SMI speaks µW, Zeus mW ---

TEST_F(AmdBackend, PowerLimitsConvertMicrowattsToMilliwatts) {
    Gpus gpus = open();
    Fake f = fake();
    zeus::Gpu& gpu = gpus[1];
    EXPECT_TRUE(gpu.capabilities().power_limit.supported);
    EXPECT_EQ(gpu.power_limit().value(), Milliwatts(300000));
    EXPECT_EQ(gpu.default_power_limit().value(), Milliwatts(300000));
    auto range = gpu.power_limit_constraints().value();
    EXPECT_EQ(range.min, Milliwatts(100001));  // 100000500 µW rounds up: 100000 mW would be refused
    EXPECT_EQ(range.max, Milliwatts(400000));

    ASSERT_TRUE(gpu.set_power_limit(Milliwatts(250000)).ok());
    EXPECT_EQ(f.power_cap_uw(1), 250000000U);
    EXPECT_EQ(gpu.power_limit().value(), Milliwatts(250000));
    EXPECT_EQ(f.power_cap_uw(0), 300000000U);  // the other GPU is untouched

    auto too_low = gpu.set_power_limit(Milliwatts(100000));
    ASSERT_FALSE(too_low.ok());
    EXPECT_EQ(too_low.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(too_low.error().message.find("100.001"), std::string::npos) << too_low.error().message;

    ASSERT_TRUE(gpu.reset_power_limit().ok());
    EXPECT_EQ(f.power_cap_uw(1), 300000000U);
    EXPECT_TRUE(gpu.check_power_limit_control().ok());
}

TEST_F(AmdBackend, SettersWithoutPermissionSayWhy) {
    env("FAKE_AMDSMI_NO_PERM", "1");
    Gpus gpus = open();
    auto s = gpus[0].set_power_limit(Milliwatts(250000));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ErrorCode::NoPermission);
    EXPECT_NE(s.error().message.find("AMDSMI_STATUS_NO_PERM"), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find("amdsmi_set_power_cap"), std::string::npos);
    EXPECT_NE(s.error().hint.find("root"), std::string::npos);
    EXPECT_EQ(s.error().vendor_code, 10);
    EXPECT_EQ(gpus[0].check_power_limit_control().error().code, ErrorCode::NoPermission);
    EXPECT_EQ(gpus[0].set_gpu_locked_clocks(Megahertz(800), Megahertz(1800)).error().code, ErrorCode::NoPermission);
}

TEST_F(AmdBackend, ClocksAndTheirResets) {
    Gpus gpus = open();
    Fake f = fake();
    EXPECT_EQ(gpus[0].supported_graphics_clocks().value(), (std::vector<Megahertz>{Megahertz(2100), Megahertz(500)}));
    EXPECT_EQ(gpus[0].supported_memory_clocks().value(), (std::vector<Megahertz>{Megahertz(1300), Megahertz(900)}));
    ASSERT_TRUE(gpus[0].set_gpu_locked_clocks(Megahertz(800), Megahertz(1800)).ok());
    EXPECT_EQ(f.clock_range(0, 0), (std::pair<std::uint64_t, std::uint64_t>{800, 1800}));
    ASSERT_TRUE(gpus[0].set_memory_locked_clocks(Megahertz(900), Megahertz(1000)).ok());
    EXPECT_EQ(f.clock_range(0, 4), (std::pair<std::uint64_t, std::uint64_t>{900, 1000}));
    EXPECT_EQ(gpus[0].set_gpu_locked_clocks(Megahertz(1800), Megahertz(800)).error().code, ErrorCode::InvalidArgument);
    ASSERT_TRUE(gpus[0].reset_locked_clocks().ok());
    EXPECT_EQ(f.perf_level(0), 0U);  // AMDSMI_DEV_PERF_LEVEL_AUTO
}

TEST_F(AmdBackend, WhatAmdCannotDoIsNotSupportedWithAReason) {
    Gpus gpus = open();
    for (zeus::Status s : {gpus[0].set_persistence_mode(true), gpus[0].reset_gpu_locked_clocks(),
                           gpus[0].reset_memory_locked_clocks()}) {
        ASSERT_FALSE(s.ok());
        EXPECT_EQ(s.error().code, ErrorCode::NotSupported);
        EXPECT_FALSE(s.error().message.empty());
    }
    auto persistence = gpus[0].persistence_mode();
    ASSERT_FALSE(persistence.ok());
    EXPECT_NE(persistence.error().message.find("persistence"), std::string::npos);
    auto memory = gpus[0].memory_power();
    ASSERT_FALSE(memory.ok());
    EXPECT_EQ(memory.error().code, ErrorCode::NotSupported);
    EXPECT_FALSE(gpus[0].capabilities().memory_power.support.supported);
}

// --- Failures ---

TEST_F(AmdBackend, MissingLibraryGivesAnEmptySetWithAHint) {
    auto o = options();
    o.amdsmi_library = "/nonexistent/libamd_smi.so.26";
    Gpus gpus = open(o);
    EXPECT_TRUE(gpus.empty());
    ASSERT_FALSE(gpus.status().ok());
    EXPECT_EQ(gpus.status().error().code, ErrorCode::LibraryNotFound);
    EXPECT_NE(gpus.status().error().hint.find("ZEUS_AMDSMI_LIBRARY"), std::string::npos);
    EXPECT_NE(gpus.status().error().hint.find("ROCm"), std::string::npos);
    EXPECT_EQ(gpus.backend_info().backend, "none");
}

TEST_F(AmdBackend, SearchOrderListsEveryPlaceTried) {
    zeus::GpuOptions o;
    env("ROCM_PATH", "/opt/rocm-test");
    auto candidates = zeus::amd::library_candidates(o);
    ASSERT_FALSE(candidates.empty());
    EXPECT_EQ(candidates.front(), "/opt/rocm-test/lib/libamd_smi.so.26");
    env("AMDSMI_LIB_DIR", "/somewhere");  // wins over ROCM_PATH
    candidates = zeus::amd::library_candidates(o);
    EXPECT_EQ(candidates.front(), "/somewhere/libamd_smi.so.26");
    EXPECT_EQ(candidates.back(), "/somewhere/libamd_smi.so");
    o.amdsmi_library = "/explicit/libamd_smi.so";
    EXPECT_EQ(zeus::amd::library_candidates(o), std::vector<std::string>{"/explicit/libamd_smi.so"});

    Gpus missing = open(zeus::GpuOptions{});
    ASSERT_FALSE(missing.status().ok());
    EXPECT_NE(missing.status().error().message.find("/somewhere/libamd_smi.so.25"), std::string::npos);
}

TEST_F(AmdBackend, SearchOrderFindsTheLibraryInAmdsmiLibDir) {
    env("AMDSMI_LIB_DIR", zeus::testing::fake_amdsmi_library_dir());
    Gpus gpus = open(zeus::GpuOptions{});
    ASSERT_TRUE(gpus.status().ok()) << gpus.status().error().describe();
    EXPECT_EQ(gpus.size(), 2U);
    EXPECT_EQ(gpus.backend_info().library_path, zeus::testing::fake_amdsmi_library_dir() + "/libamd_smi.so.26");
}

TEST_F(AmdBackend, InitFailureCarriesAmdSmisMessageAndAHint) {
    env("FAKE_AMDSMI_INIT_STATUS", "34");  // AMDSMI_STATUS_DRIVER_NOT_LOADED
    Gpus gpus = open();
    EXPECT_TRUE(gpus.empty());
    ASSERT_FALSE(gpus.status().ok());
    const auto& e = gpus.status().error();
    EXPECT_EQ(e.code, ErrorCode::DriverNotLoaded);
    EXPECT_NE(e.message.find("amdsmi_init"), std::string::npos);
    EXPECT_NE(e.message.find("Driver not loaded"), std::string::npos);
    EXPECT_NE(e.hint.find("amdgpu"), std::string::npos);
}

TEST_F(AmdBackend, AFailingGpuLeavesTheOthers) {
    env("FAKE_AMDSMI_GPUS", "3");
    env("FAKE_AMDSMI_BROKEN", "1");
    env("FAKE_AMDSMI_ENUMERATION", "kfd");
    Gpus gpus = open();
    ASSERT_EQ(gpus.size(), 3U);
    EXPECT_TRUE(gpus.status().ok());
    EXPECT_FALSE(gpus[1].available());
    EXPECT_EQ(gpus[1].status().error().code, ErrorCode::OperatingSystem);
    EXPECT_NE(gpus[1].status().error().message.find("AMDSMI_STATUS_DRM_ERROR"), std::string::npos);
    EXPECT_EQ(gpus[1].total_energy().error().code, ErrorCode::OperatingSystem);
    for (unsigned i : {0U, 2U}) {
        EXPECT_TRUE(gpus[i].available());
        EXPECT_TRUE(gpus[i].capabilities().energy_counter.supported);
        EXPECT_TRUE(gpus[i].total_energy().ok());
    }
}

TEST_F(AmdBackend, Mi250SecondDieHasNoPowerOfItsOwn) {
    env("FAKE_AMDSMI_NAME", "AMD Instinct MI250X");
    env("FAKE_AMDSMI_POWER_W", "400,0");
    Gpus gpus = open();
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_TRUE(gpus[0].capabilities().energy_counter.supported);
    EXPECT_FALSE(gpus[1].capabilities().energy_counter.supported);
    auto p = gpus[1].instant_power();
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().code, ErrorCode::NotSupported);
    EXPECT_NE(p.error().message.find("dual-die"), std::string::npos) << p.error().message;
    ASSERT_EQ(gpus.warnings().size(), 1U);
    EXPECT_NE(gpus.warnings()[0].find("both dies"), std::string::npos);
}

}  // namespace
