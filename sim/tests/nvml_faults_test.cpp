// Configured and injected faults, permissions and configuration errors, as an
// NVML client experiences them.
#include <cmath>
#include <string>

#include "nvml_fixture.h"

namespace zeus::sim::testing {
namespace {

using NvmlFaults = NvmlFixture;

TEST_F(NvmlFaults, PascalHasNoEnergyCounterButReportsPower) {
  init(simple_gpu_config("P100-PCIE-16GB"));
  unsigned long long mj = 0;
  EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(device(0), &mj), NVML_ERROR_NOT_SUPPORTED);
  nvmlFieldValue_t field{NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, 0, 0, 0, {}, {}, {}};
  ASSERT_EQ(nvmlDeviceGetFieldValues(device(0), 1, &field), NVML_SUCCESS);
  EXPECT_EQ(field.nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  unsigned mw = 0;
  ASSERT_EQ(nvmlDeviceGetPowerUsage(device(0), &mw), NVML_SUCCESS);
  EXPECT_EQ(mw, 50000u) << "idle power of the simple config";
}

TEST_F(NvmlFaults, EnergyNotSupportedFlagAndInjection) {
  init(simple_gpu_config("A100-SXM4-40GB", R"({"faults": {"energy_not_supported": true}})"));
  unsigned long long mj = 0;
  EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(device(0), &mj), NVML_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(zeusSimInjectFault(0, "energy_not_supported", 0), ZEUS_SIM_OK);
  EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(device(0), &mj), NVML_SUCCESS);
  ASSERT_EQ(zeusSimInjectFault(0, "energy_not_supported", 1), ZEUS_SIM_OK);
  EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(device(0), &mj), NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(NvmlFaults, InitErrorOnOneGpuLeavesTheOthersWorking) {
  init(R"({"gpus": [{"model": "A100-SXM4-40GB"}, {"model": "A100-SXM4-40GB", "faults": {"init_error": "GPU_IS_LOST"}},
      {"model": "A100-SXM4-40GB"}]})");
  unsigned count = 0;
  ASSERT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 3u);
  nvmlDevice_t handle = nullptr;
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(1, &handle), NVML_ERROR_GPU_IS_LOST);
  for (unsigned i : {0u, 2u}) {
    ASSERT_EQ(nvmlDeviceGetHandleByIndex_v2(i, &handle), NVML_SUCCESS);
    unsigned long long mj = 0;
    EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(handle, &mj), NVML_SUCCESS);
  }
}

TEST_F(NvmlFaults, CounterResetAtTheConfiguredTime) {
  init(simple_gpu_config("A100-SXM4-40GB", R"({"faults": {"counter_reset_at_s": 5}})"));
  int load = 0;
  ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK);
  advance(4.9);
  const unsigned long long before = energy_counter(device(0));
  EXPECT_GT(before, 1000000u) << "counts since the (simulated) driver load";
  advance(0.6);
  const unsigned long long after = energy_counter(device(0));
  // Restarted from 0 at 5 s: shows at most the 0.5 s since, at 350 W.
  EXPECT_LT(after, before);
  EXPECT_LE(after, 350u * 500u + 1);
  EXPECT_GE(after, 350u * 400u);
}

TEST_F(NvmlFaults, StuckCounterStopsAtTheConfiguredTime) {
  init(simple_gpu_config("A100-SXM4-40GB", R"({"faults": {"stuck_counter_after_s": 2}})"));
  advance(2.5);
  const unsigned long long stuck = energy_counter(device(0));
  const double truth = ground_truth(0);
  advance(10);
  EXPECT_EQ(energy_counter(device(0)), stuck);
  EXPECT_NEAR(ground_truth(0) - truth, 50.0 * 10, 1e-6) << "the truth keeps counting";
}

TEST_F(NvmlFaults, InjectedCounterResetAndStuckCounter) {
  init(simple_gpu_config());
  advance(3);
  ASSERT_EQ(zeusSimInjectFault(0, "counter_reset", 0), ZEUS_SIM_OK);
  EXPECT_EQ(energy_counter(device(0)), 0u);
  advance(1);
  EXPECT_NEAR(static_cast<double>(energy_counter(device(0))), 50.0 * 1000, 2.0);
  ASSERT_EQ(zeusSimInjectFault(0, "stuck_counter", 1), ZEUS_SIM_OK);
  const unsigned long long stuck = energy_counter(device(0));
  advance(1);
  EXPECT_EQ(energy_counter(device(0)), stuck);
  ASSERT_EQ(zeusSimInjectFault(0, "clear", 0), ZEUS_SIM_OK);
  advance(1);
  EXPECT_NEAR(static_cast<double>(energy_counter(device(0))), 50.0 * 3000, 2.0);
}

TEST_F(NvmlFaults, PowerSpikeShowsInOneInstantReadingOnly) {
  init(simple_gpu_config());
  advance(1.0);
  ASSERT_EQ(zeusSimInjectFault(0, "power_spike", 300), ZEUS_SIM_OK);
  advance(0.1);
  unsigned mw = 0;
  ASSERT_EQ(nvmlDeviceGetPowerUsage(device(0), &mw), NVML_SUCCESS);
  EXPECT_EQ(mw, 350000u);
  EXPECT_NEAR(true_power(0), 50.0, 1e-9) << "a sensor glitch, not real power";
  advance(0.1);
  ASSERT_EQ(nvmlDeviceGetPowerUsage(device(0), &mw), NVML_SUCCESS);
  EXPECT_EQ(mw, 50000u);
}

TEST_F(NvmlFaults, ConfiguredPowerSpikesRecur) {
  init(simple_gpu_config("A100-SXM4-40GB", R"({"faults": {"power_spikes": {"every_s": 1.0, "extra_w": 100}}})"));
  int spikes = 0;
  for (int i = 0; i < 30; ++i) {
    advance(0.1);
    unsigned mw = 0;
    ASSERT_EQ(nvmlDeviceGetPowerUsage(device(0), &mw), NVML_SUCCESS);
    if (mw == 150000u) ++spikes;
  }
  EXPECT_EQ(spikes, 3);
}

TEST_F(NvmlFaults, LostGpuReturnsGpuIsLost) {
  init(simple_gpu_config());
  const nvmlDevice_t handle = device(0);
  ASSERT_EQ(zeusSimInjectFault(0, "lost", 1), ZEUS_SIM_OK);
  unsigned mw = 0;
  nvmlDevice_t again = nullptr;
  EXPECT_EQ(nvmlDeviceGetPowerUsage(handle, &mw), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(0, &again), NVML_ERROR_GPU_IS_LOST);
  ASSERT_EQ(zeusSimInjectFault(0, "lost", 0), ZEUS_SIM_OK);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(handle, &mw), NVML_SUCCESS);
}

TEST_F(NvmlFaults, SettersWithoutPermissionReturnNoPermission) {
  init(simple_gpu_config("A100-SXM4-40GB",
                         R"({"permissions": {"set_power_limit": false, "set_clocks": false, "set_persistence": false}})"));
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(device(0), 300000), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nvmlDeviceSetGpuLockedClocks(device(0), 900, 900), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nvmlDeviceResetGpuLockedClocks(device(0)), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nvmlDeviceSetMemoryLockedClocks(device(0), 1215, 1215), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nvmlDeviceSetPersistenceMode(device(0), NVML_FEATURE_ENABLED), NVML_ERROR_NO_PERMISSION);
  unsigned limit = 0;
  ASSERT_EQ(nvmlDeviceGetPowerManagementLimit(device(0), &limit), NVML_SUCCESS);
  EXPECT_EQ(limit, 400000u);
}

TEST_F(NvmlFaults, ConfigErrorsFailInitWithAClearMessage) {
  use_config(R"({"gpus": [{"model": "A100-SXM4-40GB", "power": {"idel_w": 3}}]})");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(nvmlInit_v2(), NVML_ERROR_UNKNOWN);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("gpus[0].power.idel_w"), std::string::npos) << err;
  EXPECT_NE(err.find("config.json"), std::string::npos) << err;
  EXPECT_EQ(zeusSimOpen(), ZEUS_SIM_ERROR_CONFIG);
  EXPECT_NE(std::string(zeusSimLastError()).find("idel_w"), std::string::npos);
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
}

TEST_F(NvmlFaults, DriverNotLoaded) {
  use_config(R"({"driver_loaded": false})");
  EXPECT_EQ(nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(zeusSimOpen(), ZEUS_SIM_OK) << "the control API still works";
}

}  // namespace
}  // namespace zeus::sim::testing
