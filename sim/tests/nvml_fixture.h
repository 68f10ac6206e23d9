// Fixture for tests of the shared library through its C ABI: writes a config,
// points ZEUS_SIM_CONFIG (and optionally ZEUS_SIM_STATE) at it, and makes sure
// every test leaves the process-wide simulator closed.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "nvml_functions.h"
#include "test_support.h"
#include "zeus_sim/zeus_sim.h"

namespace zeus::sim::testing {

class NvmlFixture : public ::testing::Test {
 protected:
  void TearDown() override {
    while (nvmlShutdown() == NVML_SUCCESS) {
    }
    while (zeusSimClose() == ZEUS_SIM_OK) {
    }
  }

  // Points the simulator at `config_json`; shared state file if `shared_state`.
  void use_config(const std::string& config_json, bool shared_state = false) {
    config_env_.reset();
    config_env_ = std::make_unique<ScopedEnv>("ZEUS_SIM_CONFIG", dir_.write("config.json", config_json));
    state_env_.reset();
    if (shared_state) {
      state_env_ = std::make_unique<ScopedEnv>("ZEUS_SIM_STATE", dir_.file("state"));
    } else {
      state_env_ = std::make_unique<ScopedEnv>("ZEUS_SIM_STATE", nullptr);
    }
  }

  void init(const std::string& config_json, bool shared_state = false) {
    use_config(config_json, shared_state);
    ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS) << zeusSimLastError();
  }

  nvmlDevice_t device(unsigned index) {
    nvmlDevice_t handle = nullptr;
    EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(index, &handle), NVML_SUCCESS);
    return handle;
  }

  double ground_truth(unsigned gpu) {
    double joules = 0;
    EXPECT_EQ(zeusSimGroundTruthEnergy(gpu, &joules), ZEUS_SIM_OK) << zeusSimLastError();
    return joules;
  }

  double true_power(unsigned gpu) {
    double watts = 0;
    EXPECT_EQ(zeusSimTruePower(gpu, &watts), ZEUS_SIM_OK) << zeusSimLastError();
    return watts;
  }

  unsigned long long energy_counter(nvmlDevice_t device) {
    unsigned long long mj = 0;
    EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(device, &mj), NVML_SUCCESS);
    return mj;
  }

  void advance(double seconds) { ASSERT_EQ(zeusSimAdvance(seconds), ZEUS_SIM_OK) << zeusSimLastError(); }

  TempDir dir_;
  std::unique_ptr<ScopedEnv> config_env_;
  std::unique_ptr<ScopedEnv> state_env_;
};

}  // namespace zeus::sim::testing
