// The zeusSim* control API.
#include <chrono>
#include <cmath>
#include <string>

#include "nvml_fixture.h"
#include "support/build_paths.hpp"

namespace zeus::sim::testing {
namespace {

using SimCApi = NvmlFixture;

TEST_F(SimCApi, CallsNeedAnOpenSimulator) {
  use_config(simple_gpu_config());
  double now = 0;
  EXPECT_EQ(zeusSimNow(&now), ZEUS_SIM_ERROR_STATE);
  EXPECT_NE(std::string(zeusSimLastError()).find("zeusSimOpen"), std::string::npos);
  EXPECT_EQ(zeusSimClose(), ZEUS_SIM_ERROR_STATE);
}

TEST_F(SimCApi, OpenIsReferenceCountedTogetherWithNvmlInit) {
  use_config(simple_gpu_config());
  ASSERT_EQ(zeusSimOpen(), ZEUS_SIM_OK);
  ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  advance(2);
  ASSERT_EQ(zeusSimClose(), ZEUS_SIM_OK);
  unsigned long long mj = 0;
  EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(device(0), &mj), NVML_SUCCESS);
  double now = 0;
  EXPECT_EQ(zeusSimNow(&now), ZEUS_SIM_OK) << "NVML still holds the simulator";
  EXPECT_DOUBLE_EQ(now, 2.0);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  EXPECT_EQ(zeusSimNow(&now), ZEUS_SIM_ERROR_STATE);
}

TEST_F(SimCApi, InvalidInputsAreReported) {
  use_config(simple_gpu_config());
  ASSERT_EQ(zeusSimOpen(), ZEUS_SIM_OK);
  int load = 0;
  double value = 0;
  EXPECT_EQ(zeusSimLoadBegin(0, 0.0, &load), ZEUS_SIM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeusSimLoadBegin(0, 1.5, &load), ZEUS_SIM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeusSimLoadBegin(3, 0.5, &load), ZEUS_SIM_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(zeusSimLastError()).find("GPU 3"), std::string::npos) << zeusSimLastError();
  EXPECT_EQ(zeusSimLoadEnd(4242), ZEUS_SIM_ERROR_NOT_FOUND);
  EXPECT_EQ(zeusSimRunWork(0, -1, 1.0, &value), ZEUS_SIM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeusSimInjectFault(0, "melt", 1), ZEUS_SIM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zeusSimLastError()).find("counter_reset"), std::string::npos);
  EXPECT_EQ(zeusSimInjectFault(0, nullptr, 1), ZEUS_SIM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeusSimTruePower(0, nullptr), ZEUS_SIM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeusSimAdvance(-1), ZEUS_SIM_ERROR_INVALID_ARGUMENT);
  zeusSimGpuStatus_t status{};
  EXPECT_EQ(zeusSimGetGpuStatus(0, &status), ZEUS_SIM_ERROR_INVALID_ARGUMENT) << "size not set";
  status.size = sizeof status;
  ASSERT_EQ(zeusSimGetGpuStatus(0, &status), ZEUS_SIM_OK);
  EXPECT_STREQ(status.name, "NVIDIA A100-SXM4-40GB");
}

TEST_F(SimCApi, LoadsChangeTruePowerAndEnergy) {
  use_config(simple_gpu_config());
  ASSERT_EQ(zeusSimOpen(), ZEUS_SIM_OK);
  EXPECT_NEAR(true_power(0), 50, 1e-9);
  int load = 0;
  ASSERT_EQ(zeusSimLoadBegin(0, 0.5, &load), ZEUS_SIM_OK);
  EXPECT_NEAR(true_power(0), 50 + 150, 1e-9);
  const double e0 = ground_truth(0);
  advance(4);
  EXPECT_NEAR(ground_truth(0) - e0, 200 * 4, 1e-6);
  ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
  EXPECT_NEAR(true_power(0), 50, 1e-9);
  double mhz = 0;
  ASSERT_EQ(zeusSimClockMhz(0, &mhz), ZEUS_SIM_OK);
  EXPECT_EQ(mhz, 210) << "an idle GPU drops to its minimum clock";
}

TEST_F(SimCApi, RealClockRunWorkBlocksForTheWork) {
  use_config(simple_gpu_config("A100-SXM4-40GB", "{}", "real"));
  ASSERT_EQ(zeusSimOpen(), ZEUS_SIM_OK);
  EXPECT_EQ(zeusSimAdvance(1), ZEUS_SIM_ERROR_UNSUPPORTED);
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  ASSERT_EQ(zeusSimRunWork(0, 0.2, 1.0, &elapsed), ZEUS_SIM_OK);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NEAR(elapsed, 0.2, 1e-6) << "simulated time of the work itself";
  EXPECT_GE(wall, 0.19);
  EXPECT_LT(wall, 2.0);
}

TEST_F(SimCApi, TraceWorkloadFromTheRealA40Trace) {
  // Part of the clone: a missing trace fails rather than skips.
  const std::string csv = zeus::testing::data_dir() + "/power-traces/summary_power_a40.csv";
  init(simple_gpu_config("A40"));
  int profile = -1;
  ASSERT_EQ(zeusSimTraceProfileLoad(csv.c_str(), "cifar100/shufflenetv2", 1024, nullptr, &profile), ZEUS_SIM_OK)
      << zeusSimLastError();
  // Rows of that file at 150 W and 300 W (time per epoch s, average power W).
  struct Row {
    unsigned limit_mw;
    double epoch_s, power_w;
  };
  for (const Row& row : {Row{150000, 11.09, 141.60988713420585}, Row{300000, 8.525000000000002, 218.86556488095516}}) {
    ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device(0), row.limit_mw), NVML_SUCCESS);
    const double e0 = ground_truth(0);
    double elapsed = 0;
    ASSERT_EQ(zeusSimRunTraceWork(0, profile, 0.01, &elapsed), ZEUS_SIM_OK) << zeusSimLastError();
    EXPECT_NEAR(elapsed, 0.01 * row.epoch_s, 1e-6);
    EXPECT_NEAR(ground_truth(0) - e0, row.power_w * elapsed, 1e-3);
  }
  int bad = -1;
  EXPECT_EQ(zeusSimTraceProfileLoad(csv.c_str(), "cifar100/shufflenetv2", 3, nullptr, &bad), ZEUS_SIM_ERROR_NOT_FOUND);
}

bool last_error_has(const std::string& text) { return std::string(zeusSimLastError()).find(text) != std::string::npos; }

TEST_F(SimCApi, AdvanceRejectsHugeNegativeAndNonFiniteValuesWithoutHanging) {
  use_config(simple_gpu_config());
  ASSERT_EQ(zeusSimOpen(), ZEUS_SIM_OK);
  // Before the limits, 1e15 s hung under the state lock (t + substep == t).
  const int code = exit_code_in_child(60, [] {
    int failures = 0;
    for (double bad : {1e15, 1e300, HUGE_VAL, std::nan(""), -5.0, 1e7 + 1}) {
      if (zeusSimAdvance(bad) != ZEUS_SIM_ERROR_INVALID_ARGUMENT || !last_error_has("at most 1e7 s")) ++failures;
    }
    double now = -1;
    if (zeusSimNow(&now) != ZEUS_SIM_OK || now != 0) ++failures;  // still usable
    return failures;
  });
  EXPECT_EQ(code, 0) << "-1: hung or crashed; otherwise the number of wrong answers";
  advance(1e7);  // the largest single step is fine
}

TEST_F(SimCApi, VirtualClockIsCappedInTotal) {
  use_config(simple_gpu_config());
  ASSERT_EQ(zeusSimOpen(), ZEUS_SIM_OK);
  for (int i = 0; i < 100; ++i) advance(1e7);
  EXPECT_EQ(zeusSimAdvance(1.0), ZEUS_SIM_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(last_error_has("limited to 1e9 s")) << zeusSimLastError();
  double now = 0;
  ASSERT_EQ(zeusSimNow(&now), ZEUS_SIM_OK);
  EXPECT_DOUBLE_EQ(now, 1e9);
  EXPECT_NEAR(ground_truth(0), 50 * 1e9, 1.0) << "idle power all along";
}

TEST_F(SimCApi, EmptyEnvironmentValuesCountAsUnset) {
  use_config(simple_gpu_config());
  ScopedEnv no_config("ZEUS_SIM_CONFIG", "");
  ScopedEnv no_state("ZEUS_SIM_STATE", "");
  ASSERT_EQ(zeusSimOpen(), ZEUS_SIM_OK) << zeusSimLastError();
  unsigned count = 0;
  ASSERT_EQ(zeusSimGpuCount(&count), ZEUS_SIM_OK);
  EXPECT_EQ(count, 2u) << "the default configuration";
}

}  // namespace
}  // namespace zeus::sim::testing
